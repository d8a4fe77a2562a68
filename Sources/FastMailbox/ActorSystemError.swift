/// Why the actor system refused a request.
public enum ActorSystemError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Another live actor already has this name.
    case duplicateName(String)
    /// The mailbox capacity is not a power of two between 4 and 2^20 (`Mailbox.maximumCapacity`).
    case invalidMailboxCapacity(Int)
    /// The actor's mailbox ring of `capacity` slots (`bytes` bytes) could not be allocated:
    /// out of memory, or over a memory limit.
    case mailboxAllocationFailed(capacity: Int, bytes: Int)
    /// `shutdown()` has begun: nothing new is spawned.
    case shutDown
    /// A pool needs at least one routee.
    case invalidPoolSize(Int)
    /// The named spawn needs threads of its own, which a `DeterministicScheduler` does not
    /// have: a sequential body (a Swift task with real-time receive timeouts), and the
    /// placements ``SpawnOptions/Placement/dedicatedThread`` and
    /// ``SpawnOptions/Placement/mainThread``. Spawn an event actor on the workers instead.
    case unsupportedOnDeterministicScheduler(String)
    /// An actor's context was used outside the actor's turn (debug builds check this; the
    /// payload names the operation). A context is valid only during the call it was passed to.
    case contextUsedOutsideTurn(String)
    /// The ``SpawnOptions`` cannot go with this behaviour or this spawner (the payload says
    /// which and why), e.g. a supervisor for a sequential body; see ``SpawnOptions``.
    case unsupportedSpawnOptions(String)
    /// `singleton(key:create:)` was asked for a ref type other than the one its key already holds
    /// (the payload names the key and both types).
    case singletonTypeMismatch(key: String, existing: String, requested: String)

    public var description: String {
        switch self {
        case .duplicateName(let name): return "an actor named '\(name)' is already running"
        case .invalidMailboxCapacity(let n): return MailboxError.invalidCapacity(n).description
        case .mailboxAllocationFailed(let capacity, let bytes):
            return MailboxError.ringAllocationFailed(capacity: capacity, bytes: bytes).description
        case .shutDown: return "the actor system is shut down: nothing can be spawned"
        case .invalidPoolSize(let n): return "pool size \(n) is invalid: it must be at least 1"
        case .unsupportedOnDeterministicScheduler(let function):
            return "\(function) is not supported on a deterministic scheduler (it needs threads of its own): "
                + "spawn an event actor instead"
        case .unsupportedSpawnOptions(let reason):
            return "unsupported spawn options: \(reason)"
        case .singletonTypeMismatch(let key, let existing, let requested):
            return "singleton key '\(key)' holds an \(existing); it cannot be used as an \(requested)"
        case .contextUsedOutsideTurn(let operation):
            return "ActorContext.\(operation) was used outside the actor's turn: "
                + "a context is valid only during the call it was passed to"
        }
    }
}
