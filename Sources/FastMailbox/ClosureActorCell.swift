// ClosureActorCell: the cell of a closure actor, which holds its closure, so a closure
// actor allocates nothing beside its cell. No state, hooks or signal handler. The closure
// lives in a noncopyable `slot` called by a borrowing method, so a message costs no
// retain of its context; the stop sets it to nil. Turn-confined (C2).

import MNScheduler
import Synchronization

/// The behaviour closure, borrowed in place by `call`.
@usableFromInline
struct ClosureActorBody<Message: Sendable>: ~Copyable {
    /// nil once the actor stopped (`ClosureActorCell.releaseInstance`).
    @usableFromInline var closure: (@Sendable (Message, ActorContext<Message>) throws -> Void)?

    @inlinable init(_ closure: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) { self.closure = closure }

    /// Calls the closure, if not released, borrowing it in place.
    @inlinable @inline(__always)
    borrowing func call(_ message: Message, _ context: ActorContext<Message>) throws {
        try closure?(message, context)
    }
}

/// The cell of an actor whose behaviour is one closure.
@usableFromInline
final class ClosureActorCell<Message: Sendable>: ActorCellBase<Message>, @unchecked Sendable {
    /// The behaviour (released once stopped). Turn-confined.
    @exclusivity(unchecked) @usableFromInline var body: ClosureActorBody<Message>

    /// `body` is consumed: the spawn hands its +1 over.
    @inlinable
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: MailboxPass?,
         bounded: Bool, body: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) {
        self.body = ClosureActorBody(consume body)
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, mailboxPass: mailboxPass, bounded: bounded)
    }

    /// The mailbox pass (A2), with the closure call for `receive`.
    @inlinable
    static var specializedMailboxPass: MailboxPass {
        { base, max, lingering in
            let cell = unsafeDowncast(base, to: ClosureActorCell<Message>.self)
            return cell.drainOnFastPath(max: max, lingering: lingering) { message in try cell.body.call(message, ActorContext(cell: cell)) }
        }
    }

    override func receive(_ message: Message) throws {
        try body.call(message, ActorContext(cell: self))
    }

        // No preStart (born running); the same closure serves after a restart.
    override func startInstance() throws { instanceStarted = true }

    override func releaseInstance() { body.closure = nil }

    /// Supervises children with ``SupervisorStrategy/default``; once released, the system's.
    @usableFromInline override var childSupervisor: SupervisorStrategy {
        body.closure == nil ? system.defaultSupervisor : .default
    }
}
