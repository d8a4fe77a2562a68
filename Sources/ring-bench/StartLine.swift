import Foundation
import Synchronization

/// A start line for `parties` threads: all spin until the last arrives, so producers start
/// together and thread creation stays out of the timed part.
final class StartLine: Sendable {
    private let arrived = Atomic<Int>(0)
    private let parties: Int

    init(parties: Int) { self.parties = parties }

    func wait() {
        arrived.wrappingAdd(1, ordering: .acquiringAndReleasing)
        var backoff = Backoff()
        while arrived.load(ordering: .acquiring) < parties { backoff.pause() }
    }

    /// For the timing thread: waits until every other party is at the line, reads the
    /// clock, then releases them (the clock is read before anyone can start).
    func releaseAndStartClock() -> UInt64 {
        var backoff = Backoff()
        while arrived.load(ordering: .acquiring) < parties - 1 { backoff.pause() }
        let t0 = Clock.now()
        arrived.wrappingAdd(1, ordering: .acquiringAndReleasing)
        return t0
    }

    /// Starts `count` threads running `body` from this kind of line; returns the start time.
    static func startThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> UInt64 {
        let line = StartLine(parties: count + 1)
        for index in 0..<count {
            Thread {
                line.wait()
                body(index)
            }.start()
        }
        return line.releaseAndStartClock()
    }
}
