/// Why a message could not be delivered.
public enum DeadLetterReason: Sendable, Equatable {
    /// The recipient had stopped (or was stopping) when the message arrived.
    case recipientStopped
    /// A reply arrived after its `ask` had timed out (the request id is given).
    case askTimedOut(requestID: UInt64)
    /// A reply arrived for an `ask` that had already been answered.
    case duplicateReply(requestID: UInt64)
    /// The actor system was shutting down.
    case systemShutDown
    /// The recipient's mailbox is bounded and was full (a `tell`; see
    /// ``ActorRef/tell(_:)``, ``ActorRef/trySend(_:)`` and ``ActorRef/send(_:)``).
    case mailboxFull
}

/// A message that was accepted by the runtime but could not be delivered. Nothing
/// disappears silently: every such message is counted and offered to subscribers.
public struct DeadLetter: Sendable, CustomStringConvertible {
    /// The message itself.
    public let message: any Sendable
    /// The intended recipient.
    public let recipient: ActorID
    /// The recipient's name.
    public let recipientName: String
    /// Why it was not delivered.
    public let reason: DeadLetterReason

    public var description: String { "DeadLetter(\(message) → \(recipientName) \(recipient): \(reason))" }
}
