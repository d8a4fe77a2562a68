// EventActorCellBehavior: an `EventActor` instance in its cell, with the factory that
// makes a fresh one on restart. The instance is a second allocation beside the cell.

/// An ``EventActor`` as a cell's behaviour.
@usableFromInline
struct EventActorCellBehavior<A: EventActor>: CellBehavior {
    /// Nil once released.
    @usableFromInline var instance: A?
    /// Nil once released.
    @usableFromInline var factory: (@Sendable () -> A)?

    /// The first instance is made by `prepare`.
    @inlinable init(factory: @escaping @Sendable () -> A) {
        self.instance = nil
        self.factory = factory
    }

    /// With an instance already made (tests); a restart calls `factory`, when given.
    @inlinable init(instance: A, factory: (@Sendable () -> A)?) {
        self.instance = instance
        self.factory = factory
    }

    @inlinable static var isBornRunning: Bool { false }

    /// Makes the first instance, on the spawning thread.
    @inlinable mutating func prepare() {
        if instance == nil { instance = factory?() }
    }

    @inlinable @inline(__always)
    mutating func receive(_ message: A.Message, context: ActorContext<A.Message>) throws {
        // Set until released, and kept until `receive` returns: no retain needed.
        try Unmanaged.passUnretained(instance.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            try $0.receive(message, context: context)
        }
    }

    @usableFromInline
    mutating func receiveSignal(_ signal: Signal, context: ActorContext<A.Message>) throws {
        try instance?.receiveSignal(signal, context: context)
    }

    @usableFromInline
    mutating func start(restarting: Bool, context: ActorContext<A.Message>) throws {
        if restarting, let factory { instance = factory() }  // fresh state
        try instance?.preStart(context: context)
    }

    @usableFromInline
    mutating func stop(context: ActorContext<A.Message>) {
        instance?.postStop(context: context)
    }

    @usableFromInline
    mutating func release() {
        instance = nil
        factory = nil
    }

    @usableFromInline var supervisorStrategy: SupervisorStrategy? { instance?.supervisorStrategy }
}
