// ActorCell: the one final cell class of every actor spawned with a behaviour, whatever
// its kind. The behaviour is a value stored in the cell (CellBehavior.swift), so an event
// actor, a closure actor and a value behaviour share one turn (ActorCellBase) and differ
// only in what `receive` calls.

import MNScheduler

/// The cell of an actor whose behaviour is `Behavior`.
@usableFromInline
final class ActorCell<Behavior: CellBehavior & ~Copyable>: ActorCellBase<Behavior.Message>, @unchecked Sendable {
    /// Turn-confined (C2), so unchecked: a value behaviour's state costs what a local does.
    @exclusivity(unchecked) @usableFromInline var behavior: Behavior

    @inlinable
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, turn: UnitTurn?,
         bounded: Bool, behavior: consuming Behavior) {
        self.behavior = behavior
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, turn: turn, bounded: bounded)
    }

    /// The cell's own turn for `Behavior`, which the worker calls directly (ActorCellBase,
    /// A2, A3): captures nothing where `Behavior` is concrete.
    @inlinable
    static var specializedTurn: UnitTurn {
        { unit, budget, lingering in
            unsafeDowncast(unit, to: ActorCell<Behavior>.self).runOwnTurn(budget: budget, lingering: lingering)
        }
    }

    /// One turn: the common turn is the pass over up to `budget` (≥ 1) messages; any other
    /// is `runGeneralTurn`, given the pass (A2).
    @inlinable @inline(__always)
    final func runOwnTurn(budget: Int, lingering: LingerPermit) -> TurnOutcome {
        if isCommonTurn { return finishCommonTurn(pass(max: budget, lingering: lingering)) }
        return runGeneralTurn(budget: budget, lingering: lingering) { pass(max: $0, lingering: $1) }
    }

    /// Drains up to `max` messages into the behaviour.
    @inlinable @inline(__always)
    final func pass(max: Int, lingering: LingerPermit) -> TurnOutcome {
        if _slowPath(queue.firstSlotIsLive) { return firstSlotPass(max: max, lingering: lingering) }
        return drainOnFastPath(max: max, lingering: lingering, firstSlotSpent: true) { message in
            try behavior.receive(message, context: ActorContext(cell: self))
        }
    }

    /// The pass while the queue's first slot is live: out of line, so the common
    /// pass carries no code for it. Specialised like the pass.
    @inlinable @inline(never)
    final func firstSlotPass(max: Int, lingering: LingerPermit) -> TurnOutcome {
        drainOnFastPath(max: max, lingering: lingering, firstSlotSpent: false) { message in
            try behavior.receive(message, context: ActorContext(cell: self))
        }
    }

    override func receive(_ message: Behavior.Message) throws {
        try behavior.receive(message, context: ActorContext(cell: self))
    }

    override func receiveSignal(_ signal: Signal) throws {
        try behavior.receiveSignal(signal, context: ActorContext(cell: self))
    }

    override func startInstance() throws {
        let restarting = instanceStarted
        instanceStarted = true
        try behavior.start(restarting: restarting, context: ActorContext(cell: self))
    }

    override func stopInstance() {
        behavior.stop(context: ActorContext(cell: self))
    }

    override func releaseInstance() { behavior.release() }

    @usableFromInline override var childSupervisor: SupervisorStrategy {
        behavior.supervisorStrategy ?? system.defaultSupervisor
    }
}
