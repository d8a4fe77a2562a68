// ActorSystem+Async: what plain async code awaits, an actor's end and the system's, with
// no thread of the cooperative pool blocked.

import Dispatch
import MNScheduler

extension ActorRef {
    /// Waits until the actor has stopped and returns how (what its watchers get).
    ///
    /// Callable from any async code. Returns at once if the actor already stopped; for a
    /// pool, when the last routee has; for a non-actor ref (a reply-to), at once with
    /// ``TerminationReason/stopped``. Never blocks a thread; costs one small allocation
    /// and a system message. Bounded by the system's shutdown. Cancellation does not end
    /// the wait: stop the actor instead.
    public var terminated: Terminated {
        get async {
            guard let cell = identity.watchableCell else {
                return Terminated(id: id, name: name, reason: .stopped)
            }
            return await withCheckedContinuation { continuation in
                cell.sendSystem(.observe(TerminationObserver(continuation)))
            }
        }
    }
}

extension ActorSystem {
    /// ``shutdown(timeout:)`` without blocking the calling thread: the waiting runs on a
    /// Dispatch thread while the caller is suspended. Use it from async code (a service's
    /// shutdown hook, a test), also from a task on the system's own scheduler. Same report,
    /// same bound; idempotent; not cancellable.
    @discardableResult
    public func gracefulShutdown(timeout: Duration = .seconds(10)) async -> ShutdownReport {
        await withCheckedContinuation { (continuation: CheckedContinuation<ShutdownReport, Never>) in
            DispatchQueue(label: "fastmailbox.shutdown").async {
                continuation.resume(returning: self.shutdown(timeout: timeout))
            }
        }
    }
}
