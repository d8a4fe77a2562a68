import Dispatch
import MNScheduler

/// A Probe that signals each record: a test waits for the n-th value on a semaphore the
/// recording code signals, instead of polling the count with sleeps. (MNScheduler's pthread
/// Lock, not Mutex: ThreadSanitizer sees it.)
package final class SignalingProbe<T: Sendable>: Sendable {
    private let storage = Lock<[T]>([])
    private let recorded = DispatchSemaphore(value: 0)
    /// Values already waited for (only the waiting test thread touches it, under the lock).
    private let consumed = Lock<Int>(0)

    package init() {}

    package func record(_ value: T) {
        storage.withLock { $0.append(value) }
        recorded.signal()
    }

    package var values: [T] { storage.withLock { $0 } }
    package var count: Int { storage.withLock { $0.count } }

    /// Blocks until `count` values have been recorded (woken by each record), or `timeout`
    /// passed; returns whether they were. One waiting thread at a time.
    package func waitForCount(_ count: Int, timeout: Duration = .seconds(20)) -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: timeout.components.seconds * 1_000_000_000))
        return consumed.withLock { consumed in
            while consumed < count {
                guard recorded.wait(timeout: deadline) == .success else { return false }
                consumed += 1
            }
            return true
        }
    }

    /// `waitForCount` for async tests: it suspends between looks instead of blocking the
    /// thread, so the tasks it waits for get the cooperative pool's threads.
    package func waitForCount(_ count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let reached = consumed.withLock { consumed in
                while consumed < count, recorded.wait(timeout: .now()) == .success { consumed += 1 }
                return consumed >= count
            }
            if reached { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .microseconds(200))
        }
    }
}
