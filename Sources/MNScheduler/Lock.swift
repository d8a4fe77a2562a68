// Lock — a pthread mutex for the slow paths that need mutual exclusion (configuration and
// bookkeeping of shared state: subscribers, timers, lifecycles). Never on a message's hot
// path. The locks taken per spawned actor or per ask are FutexLocks instead; a mailbox's
// overflow has its own spin lock.
//
// Why not Synchronization.Mutex: on Linux its futex lives in the standard library, which
// ThreadSanitizer does not instrument. TSan would miss its happens-before edge and report
// the data it protects as racy. TSan intercepts pthread_mutex_lock and unlock.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A non-recursive mutual-exclusion lock (pthread_mutex). Thread-safe; `withLock` must
/// not be re-entered on the same thread (that deadlocks, as pthread's default mutex does).
@usableFromInline
package final class Lock<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched between pthread_mutex_lock and unlock. The mutex
    // is what excludes overlapping accesses, so the runtime's dynamic exclusivity check on
    // every withLock would prove nothing more (`@exclusivity(unchecked)`).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) @usableFromInline var state: State

    package init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the protected state. Inlinable, so callers in
    /// other modules get it specialised, with no generic metadata look-up per call.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
