// ValueActorCell: the cell of a value behaviour (ActorBehavior). The struct is stored in
// the cell and mutated in place by each turn.
//
// `state` is turn-confined (AnyActorCell C2), so it is `@exclusivity(unchecked)`: its
// fields cost what a local's do. It is nil once the actor stopped. `initial` is the value
// passed to spawn: a restart starts again from a copy of it. Per message this is
// ActorCellBase's fast path (A2) with the struct's `receive`.

import MNScheduler

/// The cell of an actor whose behaviour is a value (see the file comment).
@usableFromInline
final class ValueActorCell<B: ActorBehavior>: ActorCellBase<B.Message>, @unchecked Sendable {
    /// The current state (replaced on restart, nil once stopped). Turn-confined.
    @exclusivity(unchecked) @usableFromInline var state: B?
    /// The value a restart starts from (nil once stopped). Turn-confined.
    var initial: B?

    /// Parameters are borrowed (`__shared`), as in AnyActorCell.init.
    @usableFromInline
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: MailboxPass?,
         bounded: Bool, behavior: B) {
        self.state = behavior
        self.initial = behavior
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, mailboxPass: mailboxPass, bounded: bounded)
    }

    /// The mailbox pass for `B`, specialised where it is formed (the @inlinable spawn).
    @inlinable
    static var specializedMailboxPass: MailboxPass {
        { base, max in
            let cell = unsafeDowncast(base, to: ValueActorCell<B>.self)
            return cell.drainOnFastPath(max: max) { message in
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
