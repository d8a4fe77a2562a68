// CellBehavior: what an actor cell calls for the actor's own code. Every actor spawned
// with a behaviour has one cell class, `ActorCell<Behavior>`; the behaviour is a value
// stored inside it. The three conformers are the three ways to write an actor: an
// `EventActor` object, a closure, an `ActorBehavior` value.
//
// Every requirement runs in the cell's turn (C2), so a conformer needs no locks.

/// The behaviour stored in an ``ActorCell``.
@usableFromInline
protocol CellBehavior<Message>: ~Copyable {
    associatedtype Message: Sendable

    /// The cell starts without a turn: no `preStart` to run.
    static var isBornRunning: Bool { get }

    /// Called once by the spawn, after its arguments were checked and before the cell is
    /// made.
    mutating func prepare()

    /// Handles one message. A released behaviour ignores it.
    mutating func receive(_ message: Message, context: ActorContext<Message>) throws

    /// Handles a signal (a watched actor stopped).
    mutating func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws

    /// Runs `preStart`. `restarting`: a supervisor restart, so the behaviour starts again
    /// from its spawned state first.
    mutating func start(restarting: Bool, context: ActorContext<Message>) throws

    /// Runs `postStop`.
    mutating func stop(context: ActorContext<Message>)

    /// Drops the actor's state once it stopped for good.
    mutating func release()

    /// How the actor supervises its children; nil once released (the system's default).
    var supervisorStrategy: SupervisorStrategy? { get }
}
