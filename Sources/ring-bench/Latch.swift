import Dispatch
import Synchronization

/// Blocks one thread until `count` completions were counted down, from any threads.
/// `countDown` is lock-free; the last one signals a semaphore, so `wait` sleeps.
final class Latch: Sendable {
    private let remaining: Atomic<Int>
    private let semaphore = DispatchSemaphore(value: 0)

    init(_ count: Int) { remaining = Atomic(count) }

    func countDown(_ n: Int = 1) {
        if remaining.wrappingSubtract(n, ordering: .acquiringAndReleasing).newValue == 0 { semaphore.signal() }
    }

    /// Waits for the count to reach zero; false after `seconds` without it (a lost message).
    @discardableResult
    func wait(seconds: Double = 120) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }

    var count: Int { remaining.load(ordering: .acquiring) }
}
