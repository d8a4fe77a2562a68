/// What ``ActorRef/trySend(_:)`` did with a message.
public enum TrySendResult<Message: Sendable>: Sendable {
    /// The mailbox took the message.
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

/// Why ``ActorRef/send(_:)`` did not enqueue a message. Either way the message is handed
/// back: nothing is dropped.
public enum SendError<Message: Sendable>: Error, CustomStringConvertible {
    /// The actor has stopped (before the send, or while it waited for room).
    case stopped(Message)
    /// The sending task was cancelled while it waited for room in a full bounded mailbox.
    case cancelled(Message)

    /// The message that was not sent.
    public var message: Message {
        switch self {
        case .stopped(let message), .cancelled(let message): return message
        }
    }

    public var description: String {
        switch self {
        case .stopped: return "SendError.stopped: the actor has stopped; the \(Message.self) was handed back"
        case .cancelled: return "SendError.cancelled: the task was cancelled while waiting for room; the \(Message.self) was handed back"
        }
    }
}
