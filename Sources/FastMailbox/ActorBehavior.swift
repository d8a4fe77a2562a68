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
/// The cell stores the value and every turn mutates it in place: the state costs what a
/// local variable costs — no object of its own, no reference counting, no dynamic
/// exclusivity check (the turn is the only access, see below).
///
/// Guarantees:
/// - Isolation: the runtime calls these methods from one thread at a time, with a
///   happens-before edge between successive calls, so the value needs no locks.
/// - Restart: a supervisor restart starts again from a copy of the value passed to
///   `spawn` (value semantics: the failed state is discarded). State held in a class
///   instance the struct refers to is shared by that copy, not reset.
/// - Stop: the value is released after `postStop`.
///
/// When to choose it over an ``EventActor`` class: when the state is plain data (counters,
/// collections, small state machines) and a restart should start from the initial value.
/// Choose a class when the state is not `Sendable`, when the actor is a reference type by
/// nature (it hands out `self`-bound callbacks), or when each restart must build its state
/// with a factory. Choose a closure for a stateless actor.
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
