// ActorSystem+Async — the parts of the lifecycle that plain async code awaits: the end of
// one actor (`ActorRef.terminated`) and the end of the system (`gracefulShutdown`).
//
// Neither blocks a thread of Swift's cooperative pool. `terminated` parks a continuation
// in the cell (a system message, handled by the cell's next turn; fired by finalizeStop).
// `gracefulShutdown` runs the blocking `shutdown(timeout:)` on a thread of its own
// (a Dispatch queue: not the cooperative pool, not the scheduler's workers) and suspends
// until it returns.

import Dispatch
import MNScheduler

extension ActorRef {
    /// Waits until the actor has stopped and returns how (the same value its watchers get).
    ///
    /// Callable from any async code — a task, a native actor, `main.swift` — without being
    /// an actor of the system. Returns at once if the actor has already stopped. For a pool's
    /// ref it returns when the last routee has stopped. A ref that is not an actor (an
    /// `ask`'s reply-to) returns at once with ``TerminationReason/stopped``.
    ///
    /// - Suspension: never blocks a thread; costs one small allocation and one system
    ///   message to the actor. Every actor stops by the end of ``ActorSystem/shutdown(timeout:)``
    ///   (at the latest when its turn in hand ends), so the wait is bounded by the system's
    ///   life. Cancelling the waiting task does not end the wait: stop the actor instead.
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
    /// Shuts the system down like ``shutdown(timeout:)`` — same steps, same report, same
    /// bound (about `timeout` + 100 ms) — without blocking the calling thread: the waiting
    /// runs on a Dispatch thread of its own while the caller is suspended.
    ///
    /// Use it from async code (a ServiceLifecycle service, a Hummingbird or Vapor shutdown
    /// hook, a test): the synchronous ``shutdown(timeout:)`` would hold a thread of Swift's
    /// small cooperative pool for up to `timeout`. May be called from a task running on the
    /// system's own scheduler (that task is suspended, not its worker). Idempotent: every
    /// call, sync or async, returns the first report. Not cancellable: the shutdown, once
    /// begun, finishes.
    @discardableResult
    public func gracefulShutdown(timeout: Duration = .seconds(10)) async -> ShutdownReport {
        await withCheckedContinuation { (continuation: CheckedContinuation<ShutdownReport, Never>) in
            DispatchQueue(label: "fastmailbox.shutdown").async {
                continuation.resume(returning: self.shutdown(timeout: timeout))
            }
        }
    }
}
