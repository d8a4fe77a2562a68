/// Why ``ActorRef/send(_:)`` did not enqueue a message. Either way the message is handed
/// back in the error: nothing is dropped and nothing went to dead letters.
///
/// `send(_:)` waits only for room in a bounded mailbox; a growing mailbox never makes it
/// wait, so there it can fail only with ``stopped(_:)``. Senders waiting for room are
/// resumed in the order they began waiting, and a waiter that fails leaves the others
/// waiting.
public enum SendError<Message: Sendable>: Error, CustomStringConvertible {
    /// The actor has stopped (before the send, or while the sender waited for room).
    case stopped(Message)
    /// The sending task was cancelled while it waited for room in a full bounded mailbox.
    case cancelled(Message)

    /// The message that was not sent.
    public var message: Message {
        switch self {
        case .stopped(let message), .cancelled(let message): return message
        }
    }

    /// Names the case and the message type, not the message (which may be large or private).
    public var description: String {
        switch self {
        case .stopped: return "SendError.stopped: the actor has stopped; the \(Message.self) was handed back"
        case .cancelled: return "SendError.cancelled: the task was cancelled while waiting for room; the \(Message.self) was handed back"
        }
    }
}
