/// An event-based actor: an object whose `receive` runs for one message at a time, on
/// whichever worker its turn lands on.
///
/// Spawn it with `ActorSystem.spawn(options:_:)` and a factory, called again on each
/// supervisor restart. One call at a time, each happening-before the next, so the
/// instance needs no locks and need not be `Sendable`. Hand out `context.myself`, never
/// `self`.
public protocol EventActor<Message>: AnyObject {
    /// The messages this actor understands (usually an enum).
    associatedtype Message: Sendable

    /// Handles one message. Throwing hands the error to the parent's supervisor strategy.
    func receive(_ message: Message, context: ActorContext<Message>) throws

    /// Runs before the first message (and after a restart, on the fresh instance).
    func preStart(context: ActorContext<Message>) throws

    /// Runs once after the actor stopped (and on the old instance before a restart).
    func postStop(context: ActorContext<Message>)

    /// A watched actor stopped, or another signal arrived. Default: ignore.
    func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws

    /// How this actor supervises the children it spawns. Default: ``SupervisorStrategy/default``.
    var supervisorStrategy: SupervisorStrategy { get }
}

extension EventActor {
    public func preStart(context: ActorContext<Message>) throws {}
    public func postStop(context: ActorContext<Message>) {}
    public func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws {}
    public var supervisorStrategy: SupervisorStrategy { .default }
}

/// An actor whose behaviour is one closure, as an EventActor type (tests build cells
/// with it; spawns keep closures in ClosureCellBehavior).
@usableFromInline
final class ClosureActor<Message: Sendable>: EventActor {
    @usableFromInline let body: (Message, ActorContext<Message>) throws -> Void
    @inlinable init(_ body: @escaping (Message, ActorContext<Message>) throws -> Void) { self.body = body }
    @inlinable func receive(_ message: Message, context: ActorContext<Message>) throws { try body(message, context) }
}
