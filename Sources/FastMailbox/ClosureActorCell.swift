// ClosureActorCell: the cell of a closure actor (`spawn(of:options:receive:)`). The
// closure is the behaviour, kept in the cell itself, so a closure actor allocates no object
// beside its cell. It has no state, no preStart, no postStop, no signal handler and the
// default child supervisor, so ActorCell's work with its instance reduces to calling it.
//
// The closure lives in `slot`, a noncopyable struct, called by a borrowing method: the
// call borrows it in place, so a message costs no retain of the closure's context. (A
// plain `var` of closure type is copied around every call.) The stop sets it to nil, so
// what it captured keeps nothing alive. Turn-confined (AnyActorCell C2).
// Per message this is ActorCellBase's fast path (A2) with the closure call for `receive`.

import MNScheduler
import Synchronization

/// The behaviour closure of a closure actor, borrowed in place by `call` (file comment).
@usableFromInline
struct ClosureActorBody<Message: Sendable>: ~Copyable {
    /// nil once the actor stopped (`ClosureActorCell.releaseInstance`).
    @usableFromInline var closure: (@Sendable (Message, ActorContext<Message>) throws -> Void)?

    @inlinable init(_ closure: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) { self.closure = closure }

    /// Calls the closure, if not yet released, borrowing it in place (no retain of its
    /// context, unlike `closure.unsafelyUnwrapped(…)`).
    @inlinable @inline(__always)
    borrowing func call(_ message: Message, _ context: ActorContext<Message>) throws {
        try closure?(message, context)
    }
}

/// The cell of an actor whose behaviour is one closure (see the file comment).
@usableFromInline
final class ClosureActorCell<Message: Sendable>: ActorCellBase<Message>, @unchecked Sendable {
    /// The behaviour (released once stopped). Turn-confined.
    @exclusivity(unchecked) @usableFromInline var body: ClosureActorBody<Message>

    /// Parameters are borrowed (`__shared`), as in AnyActorCell.init. `body` is consumed,
    /// so the spawn hands its +1 of the closure over. Inlinable for the same reason.
    @inlinable
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: MailboxPass?,
         bounded: Bool, body: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) {
        self.body = ClosureActorBody(consume body)
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, mailboxPass: mailboxPass, bounded: bounded)
    }

    /// The mailbox pass, specialised where it is formed (the @inlinable spawn entry points):
    /// ActorCell's, with the closure call for `receive`.
    @inlinable
    static var specializedMailboxPass: MailboxPass {
        { base, max in
            let cell = unsafeDowncast(base, to: ClosureActorCell<Message>.self)
            return cell.drainOnFastPath(max: max) { message in try cell.body.call(message, ActorContext(cell: cell)) }
        }
    }

    override func receive(_ message: Message) throws {
        try body.call(message, ActorContext(cell: self))
    }

    // No preStart to run (the cell is born running, ActorSystem.enroll) and the same
    // closure serves again after a restart (it holds no state of its own).
    override func startInstance() throws { instanceStarted = true }

    override func releaseInstance() { body.closure = nil }

    /// A closure actor supervises its children with ``SupervisorStrategy/default`` (an
    /// EventActor's default); once released, the system's (as ActorCell with no instance).
    @usableFromInline override var childSupervisor: SupervisorStrategy {
        body.closure == nil ? system.defaultSupervisor : .default
    }
}
