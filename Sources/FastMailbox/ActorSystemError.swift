/// Why the actor system refused a request.
public enum ActorSystemError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Another live actor already has this name.
    case duplicateName(String)
    /// The mailbox capacity is not a power of two between 4 and 2^30.
    case invalidMailboxCapacity(Int)
    /// `shutdown()` has begun: nothing new is spawned.
    case shutDown
    /// A pool needs at least one routee.
    case invalidPoolSize(Int)

    public var description: String {
        switch self {
        case .duplicateName(let name): return "an actor named '\(name)' is already running"
        case .invalidMailboxCapacity(let n): return MailboxError.invalidCapacity(n).description
        case .shutDown: return "the actor system is shut down: nothing can be spawned"
        case .invalidPoolSize(let n): return "pool size \(n) is invalid: it must be at least 1"
        }
    }
}
