// ValueActorCell: the cell of a value behaviour, stored in the cell and mutated in place.
// `state` is turn-confined (C2), so `@exclusivity(unchecked)`: it costs what a local does.
// A restart starts from a copy of `initial`.

import MNScheduler

/// The cell of an actor whose behaviour is a value.
@usableFromInline
final class ValueActorCell<B: ActorBehavior>: ActorCellBase<B.Message>, @unchecked Sendable {
    /// The current state (replaced on restart, nil once stopped). Turn-confined.
    @exclusivity(unchecked) @usableFromInline var state: B?
    /// The value a restart starts from (nil once stopped). Turn-confined.
    var initial: B?

    @usableFromInline
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: MailboxPass?,
         bounded: Bool, behavior: B) {
        self.state = behavior
        self.initial = behavior
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, mailboxPass: mailboxPass, bounded: bounded)
    }

    /// The mailbox pass for `B` (A2).
    @inlinable
    static var specializedMailboxPass: MailboxPass {
        { base, max, lingering in
            let cell = unsafeDowncast(base, to: ValueActorCell<B>.self)
            return cell.drainOnFastPath(max: max, lingering: lingering) { message in
                try cell.state?.receive(message, context: ActorContext(cell: cell))
            }
        }
    }

    override func receive(_ message: B.Message) throws {
        try state?.receive(message, context: ActorContext(cell: self))
    }

    override func receiveSignal(_ signal: Signal) throws {
        try state?.receiveSignal(signal, context: ActorContext(cell: self))
    }

    override func startInstance() throws {
        if instanceStarted { state = initial }  // a restart: start again from the spawned value
        instanceStarted = true
        try state?.preStart(context: ActorContext(cell: self))
    }

    override func stopInstance() {
        state?.postStop(context: ActorContext(cell: self))
    }

    override func releaseInstance() {
        state = nil
        initial = nil
    }

    @usableFromInline override var childSupervisor: SupervisorStrategy { state?.supervisorStrategy ?? system.defaultSupervisor }
}
