// ClosureCellBehavior: a closure actor's closure, held in its cell, so a closure actor
// allocates nothing beside its cell (and the closure's context, if it captures). No
// state, hooks or signal handler; the actor is born running. The struct is noncopyable
// and the call borrows it in place, so a message costs no retain of the context.

/// A closure as a cell's behaviour.
@usableFromInline
struct ClosureCellBehavior<Message: Sendable>: CellBehavior, ~Copyable {
    /// Nil once released.
    @usableFromInline var closure: (@Sendable (Message, ActorContext<Message>) throws -> Void)?

    @inlinable init(_ closure: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) {
        self.closure = closure
    }

    @inlinable mutating func prepare() {}

    @inlinable static var isBornRunning: Bool { true }

    @inlinable @inline(__always)
    mutating func receive(_ message: Message, context: ActorContext<Message>) throws {
        try call(message, context)
    }

    /// Borrows the closure in place.
    @inlinable @inline(__always)
    borrowing func call(_ message: Message, _ context: ActorContext<Message>) throws {
        try closure?(message, context)
    }

    @usableFromInline
    mutating func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws {}

    /// The same closure serves after a restart.
    @usableFromInline
    mutating func start(restarting: Bool, context: ActorContext<Message>) throws {}

    @usableFromInline
    mutating func stop(context: ActorContext<Message>) {}

    @usableFromInline
    mutating func release() { closure = nil }

    @usableFromInline var supervisorStrategy: SupervisorStrategy? { closure == nil ? nil : .default }
}
