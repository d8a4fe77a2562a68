import Foundation
@testable import MNScheduler
import TestSupport

#if DEBUG  // arms a test hook, which release builds compile out
/// A producer on a plain thread (so its enqueue holds a ring epoch section), stopped by
/// `MPSCQueueTestHook.armClaim` after it loaded the ring and before its claim, until
/// `resume()`. Debug builds only, like the hook.
final class PausedProducer: Sendable {
    private let open = DispatchSemaphore(value: 0)
    private let result = Lock<MPSCQueue.EnqueueResult?>(nil)
    /// True once the producer stopped at the hook.
    let paused: Bool

    /// Starts the enqueue of `word` into `box`'s queue and returns once it has stopped.
    init(enqueuing word: UInt, into box: MPSCQueueBox) {
        let arrived = DispatchSemaphore(value: 0)
        MPSCQueueTestHook.armClaim(box.queue) { [open] in arrived.signal(); open.wait() }
        DispatchQueue.global().async { [result] in
            let outcome = box.queue.enqueue(word: word)
            result.withLock { $0 = outcome }
        }
        paused = arrived.wait(timeout: .now() + 20) == .success
    }

    /// Lets the enqueue finish; its result, or nil if it did not finish in time.
    func resume() -> MPSCQueue.EnqueueResult? {
        open.signal()
        _ = waitUntil { result.withLock { $0 } != nil }
        return result.withLock { $0 }
    }
}
#endif

extension MPSCQueueBox {
    /// One drain of a word queue with no limit, into `out` (the queue's consumer).
    func drainAll(into out: inout [UInt]) -> MPSCQueue.DrainOutcome {
        drain(max: Int.max) { out.append($0) }
    }
}
