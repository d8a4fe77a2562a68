/// What ``ActorRef/trySend(_:)`` did with a message: it never waits and never drops one.
///
/// Only an actor spawned with a bounded mailbox can be ``full(_:)``; a growing mailbox
/// takes every message while the actor runs.
public enum TrySendResult<Message: Sendable>: Sendable {
    /// The mailbox took the message: it will be delivered, or reported as a dead letter if
    /// the actor stops first.
    case accepted
    /// The actor's mailbox is bounded and full: nothing was enqueued; here is the message back.
    case full(Message)
    /// The actor has stopped: nothing was enqueued; here is the message back.
    case stopped(Message)

    /// True for ``accepted``.
    public var isAccepted: Bool { if case .accepted = self { return true } else { return false } }
}

/// Results compare equal when they are the same case with equal messages.
extension TrySendResult: Equatable where Message: Equatable {}
