import MNScheduler

/// Collects values from any thread. (MNScheduler's pthread Lock, not Synchronization.Mutex:
/// ThreadSanitizer cannot see Mutex's futex on Linux.)
package final class Probe<T: Sendable>: Sendable {
    private let storage = Lock<[T]>([])
    package init() {}
    package func record(_ value: T) { storage.withLock { $0.append(value) } }
    package var values: [T] { storage.withLock { $0 } }
    package var count: Int { storage.withLock { $0.count } }
}
