/// Thrown by an ``Inbox``'s receive once its sequential actor is stopping: at once after
/// `ref.stop(.immediately)` (even with messages still queued: those go to dead letters),
/// or when the mailbox is closed and empty after `ref.stop(.afterDrainingMailbox)` or
/// `ActorSystem.shutdown()`. A body that lets it propagate ends with the reason of the stop,
/// not as a failure; `for await message in inbox` simply ends instead.
public struct ActorStoppedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stopped actor's name.
    public let actorName: String
    /// The stopped actor's identity.
    public let actorID: ActorID

    public var description: String {
        "actor '\(actorName)' \(actorID) is stopping: its inbox delivers no more messages"
    }
}
