// ValueCellBehavior: an `ActorBehavior` value stored in its cell and mutated in place.
// The cell's `behavior` is turn-confined and unchecked, so the value's state costs what a
// local variable costs. A restart starts from a copy of the spawned value.

/// An ``ActorBehavior`` value as a cell's behaviour.
@usableFromInline
struct ValueCellBehavior<B: ActorBehavior>: CellBehavior {
    /// The current state (replaced on restart, nil once released).
    @usableFromInline var state: B?
    /// The value a restart starts from (nil once released).
    @usableFromInline var initial: B?

    @inlinable init(_ behavior: B) {
        self.state = behavior
        self.initial = behavior
    }

    @inlinable mutating func prepare() {}

    @inlinable static var isBornRunning: Bool { false }

    @inlinable @inline(__always)
    mutating func receive(_ message: B.Message, context: ActorContext<B.Message>) throws {
        try state?.receive(message, context: context)
    }

    @usableFromInline
    mutating func receiveSignal(_ signal: Signal, context: ActorContext<B.Message>) throws {
        try state?.receiveSignal(signal, context: context)
    }

    @usableFromInline
    mutating func start(restarting: Bool, context: ActorContext<B.Message>) throws {
        if restarting { state = initial }
        try state?.preStart(context: context)
    }

    @usableFromInline
    mutating func stop(context: ActorContext<B.Message>) {
        state?.postStop(context: context)
    }

    @usableFromInline
    mutating func release() {
        state = nil
        initial = nil
    }

    @usableFromInline var supervisorStrategy: SupervisorStrategy? { state?.supervisorStrategy }
}
