/// A value behaviour: a struct whose stored properties are the actor's state and whose
/// `mutating receive` handles one message at a time.
///
/// Spawn it with ``ActorSystem/spawn(options:_:)-(_,B)`` passing a value:
/// ```swift
/// struct Counter: ActorBehavior {
///     var count = 0
///     mutating func receive(_ message: Int, context: ActorContext<Int>) {
///         count += message
///     }
/// }
/// let counter = try system.spawn(Counter())
/// ```
/// The cell stores the value and mutates it in place: no object, no reference counting,
/// no dynamic exclusivity check.
///
/// - Isolation: one call at a time, each happening-before the next: no locks needed.
/// - Restart: starts from a copy of the value given to `spawn`; a class instance it refers
///   to is shared, not reset.
/// - Stop: the value is released after `postStop`.
///
/// Prefer it for plain-data state that a restart should reset; an ``EventActor`` class
/// for non-`Sendable` state, `self`-bound callbacks or a factory per restart; a closure
/// for a stateless actor.
public protocol ActorBehavior<Message>: Sendable {
    /// The messages this actor understands (usually an enum).
    associatedtype Message: Sendable

    /// Handles one message. Throwing hands the error to the parent's supervisor strategy.
    mutating func receive(_ message: Message, context: ActorContext<Message>) throws

    /// Runs before the first message (and after a restart, on the fresh copy).
    mutating func preStart(context: ActorContext<Message>) throws

    /// Runs once after the actor stopped (and on the failed state before a restart).
    mutating func postStop(context: ActorContext<Message>)

    /// A watched actor stopped, or another signal arrived. Default: ignore.
    mutating func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws

    /// How this actor supervises the children it spawns. Default: ``SupervisorStrategy/default``.
    var supervisorStrategy: SupervisorStrategy { get }
}

extension ActorBehavior {
    public mutating func preStart(context: ActorContext<Message>) throws {}
    public mutating func postStop(context: ActorContext<Message>) {}
    public mutating func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws {}
    public var supervisorStrategy: SupervisorStrategy { .default }
}
