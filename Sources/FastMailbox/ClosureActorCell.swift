// ClosureActorCell — the cell of a closure actor (`ActorSystem.spawn(of:options:receive:)`,
// `ActorContext.spawn(of:options:receive:)`): the closure is the behaviour, kept in the cell itself.
//
// Why a cell of its own: as `ActorCell<ClosureActor<M>>` every closure actor allocated a
// ClosureActor (an object holding nothing but the closure) beside its cell — one malloc
// and one free of each actor's five, about 600 instructions of a spawn's life
// (scripts/instructions.sh spawn) and 32 bytes of every live actor. A closure actor has
// no state of its own, no preStart, no postStop, no signal handler and the default child
// supervisor, so what ActorCell does with its instance reduces here to calling the closure.
//
// The closure lives in `slot`, a noncopyable struct, and is called by a borrowing method:
// the call borrows the closure in place, so a message costs no retain and release of the
// closure's context (a plain `var` of closure type is copied — retained and released —
// around every call, because the callee could overwrite the property; the ClosureActor's
// `let` avoided that the same way). The stop drops the closure (`releaseInstance` sets it
// to nil), so what it captured — refs to other actors, to the system — no longer keeps
// anything alive, as ActorCell drops its instance. (A no-op closure in its place would be
// a closure formed in generic code: it captures `Message`'s metadata, an allocation.)
// Turn-confined (AnyActorCell C2), like ActorCell's instance: `@exclusivity(unchecked)`.
//
// Per message this is ActorCell's fast path (ActorCellBase.drainOnFastPath, shared) with
// the closure call for `receive`.

import MNScheduler
import Synchronization

/// The behaviour closure of a closure actor, borrowed in place by `call` (file comment).
@usableFromInline
struct ClosureActorBody<Message: Sendable>: ~Copyable {
    /// nil once the actor stopped (`ClosureActorCell.releaseInstance`).
    @usableFromInline var closure: (@Sendable (Message, ActorContext<Message>) throws -> Void)?

    @inlinable init(_ closure: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void) { self.closure = closure }

    /// Calls the closure, if not yet released, without copying it (no retain of its context).
    /// (The optional call borrows in place; `closure.unsafelyUnwrapped(…)` copied it: a
    /// retain, a release and a reabstraction, ~375 instructions per message.)
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

    /// Parameters are borrowed (`__shared`), as in AnyActorCell.init; `body` is taken
    /// (`consume`d from the spawn on: with a borrowed or merely `__owned` value the spawn
    /// kept its own copies alive to the end of its scope, two retains and releases of the
    /// closure's context per spawn); `mailbox` is the shape of the cell's own mailbox queue
    /// (ActorCellBase.init). Inlinable, so that the spawn (inlinable too) hands its +1 of
    /// the closure over: out of line, this init borrowed it, retained it to store it, and
    /// the caller released its own.
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
