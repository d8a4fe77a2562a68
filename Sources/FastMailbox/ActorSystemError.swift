/// Why the actor system refused a request.
public enum ActorSystemError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Another live actor already has this name.
    case duplicateName(String)
    /// The mailbox capacity is not a power of two between 4 and 2^20 (`Mailbox.maximumCapacity`).
    case invalidMailboxCapacity(Int)
    /// The mailbox ring of `capacity` slots (`bytes` bytes) could not be allocated.
    case mailboxAllocationFailed(capacity: Int, bytes: Int)
    /// `shutdown()` has begun: nothing new is spawned.
    case shutDown
    /// A pool needs at least one routee.
    case invalidPoolSize(Int)
    /// A `DeterministicScheduler` has no threads for this spawn: a sequential body, or a
    /// ``SpawnOptions/Placement/dedicatedThread`` or ``SpawnOptions/Placement/mainThread``
    /// placement. Spawn an event actor on the workers instead.
    case unsupportedOnDeterministicScheduler(String)
    /// An actor's context was used outside its turn (debug builds check; the payload names
    /// the operation).
    case contextUsedOutsideTurn(String)
    /// The ``SpawnOptions`` cannot go with this behaviour or spawner (the payload says why).
    case unsupportedSpawnOptions(String)
    /// `singleton(key:create:)` was asked for another ref type than its key holds.
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
