import MNScheduler

/// Lifecycle traffic between cells, in each cell's system queue, drained before user
/// messages.
enum SystemMessage: Sendable {
    /// Stop, now or after the mailbox drains.
    case stop(StopMode, TerminationReason)
    /// `watcher` wants a `.terminated` when this cell stops.
    case watch(AnyActorCell)
    /// Cancel a watch.
    case unwatch(ActorID)
    /// A watched actor or a child stopped.
    case terminated(Terminated)
    /// A child escalated: treat it as this cell's own failure.
    case childFailed(ChildFailedError)
    /// `await ref.terminated` from outside any actor.
    case observe(TerminationObserver)
    /// Give the ring back if the mailbox drains empty this turn (the idle walk; only the
    /// general turn acts on it).
    case releaseMailboxRing
    /// A timer fired (CellTimer): its event runs in the turn, unless stopped.
    case timerFired(CellTimerEvent)
}

/// One `await ref.terminated`, resumed exactly once.
final class TerminationObserver: Sendable {
    private let continuation: Lock<CheckedContinuation<Terminated, Never>?>

    init(_ continuation: CheckedContinuation<Terminated, Never>) {
        self.continuation = Lock(continuation)
    }

    /// Later calls do nothing.
    func fire(_ termination: Terminated) {
        continuation.withLock { $0.take() }?.resume(returning: termination)
    }
}

/// The error a parent fails with when a child escalates.
public struct ChildFailedError: Error, Sendable, CustomStringConvertible {
    /// The child that failed.
    public let child: ActorID
    /// Its name.
    public let childName: String
    /// The child's error, described.
    public let underlying: String

    public var description: String { "child \(childName) \(child) failed: \(underlying)" }
}
