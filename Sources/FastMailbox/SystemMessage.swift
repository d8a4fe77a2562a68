import MNScheduler

/// Lifecycle traffic between cells. It travels in each cell's own small system queue,
/// which a turn always drains before user messages.
enum SystemMessage: Sendable {
    /// Stop, now or after the mailbox drains.
    case stop(StopMode, TerminationReason)
    /// `watcher` wants a `.terminated` when this cell stops.
    case watch(AnyActorCell)
    /// Cancel a watch.
    case unwatch(ActorID)
    /// A watched actor or a child stopped.
    case terminated(Terminated)
    /// A child escalated its failure: treat it as this cell's own failure.
    case childFailed(ChildFailedError)
    /// Code outside any actor awaits this cell's end (`ActorRef.terminated`).
    case observe(TerminationObserver)
    /// The idle-mailbox walk asks this cell to give its ring back if its mailbox drains
    /// empty in this turn (ActorSystem+Reclaim.swift). Sent only to a cell whose system
    /// slot holds a queue. Only the general turn acts on it; elsewhere it is dropped.
    case releaseMailboxRing
    /// A timer of this cell fired (CellTimer): its event runs in the turn, unless stopped.
    case timerFired(CellTimerEvent)
}

/// One `await ref.terminated`: resumed exactly once, with the cell's `Terminated`.
final class TerminationObserver: Sendable {
    private let continuation: Lock<CheckedContinuation<Terminated, Never>?>

    init(_ continuation: CheckedContinuation<Terminated, Never>) {
        self.continuation = Lock(continuation)
    }

    /// Resumes the waiting task (later calls do nothing).
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
