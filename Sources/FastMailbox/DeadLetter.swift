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
    /// A `tell` found the recipient's bounded mailbox full.
    case mailboxFull
}

/// A message the runtime accepted but could not deliver: counted and offered to
/// subscribers, never lost silently.
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
