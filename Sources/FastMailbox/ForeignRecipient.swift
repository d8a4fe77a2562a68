// ForeignRecipient: how FastMailboxDistributed makes an `ActorRef` to a remote actor.
//  (F1) A tell calls the foreign `deliver` exactly once; it hands the message on or
//       reports it, never drops it silently.
//  (F2) The ref's id comes from this process's counter, so it never aliases a local ref.
//  (F3) Watching the ref watches `watchProxy`, a local cell given the ref's id.
// Immutable after init; the foreign `deliver` must be callable from any thread.

import MNScheduler

/// What an `ActorRef` can point at outside this module (a remote actor).
package protocol ForeignRecipient<Message>: AnyObject, Sendable {
    associatedtype Message: Sendable
    /// Identity (F2).
    var id: ActorID { get }
    var name: String { get }
    /// Hands `message` on, from any thread, without blocking; false when reported (F1).
    @discardableResult func deliver(_ message: Message) -> Bool
    /// A request to stop the remote actor (may be ignored).
    func stop(_ mode: StopMode)
    /// A request carrying this ref as reply-to was dead-lettered here.
    func requestDeadLettered()
}

@usableFromInline
final class ForeignRecipientAdapter<Message: Sendable>: MessageRecipient, AskFailing, RecipientIdentity,
                                                        @unchecked Sendable {
    // @unchecked: every field is a `let` of a Sendable or thread-safe type.
    let foreign: any ForeignRecipient<Message>
    /// For asks through this ref.
    let system: ActorSystem
    let watchableCell: AnyActorCell?

    init(foreign: any ForeignRecipient<Message>, system: ActorSystem, watchableCell: AnyActorCell?) {
        self.foreign = foreign
        self.system = system
        self.watchableCell = watchableCell
    }

    var id: ActorID { foreign.id }
    var name: String { foreign.name }
    var mailboxDepth: Int { 0 }
    @discardableResult func deliver(_ message: Message) -> Bool { foreign.deliver(message) }
    @usableFromInline @discardableResult func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        foreign.deliver(MessageEncoding<Message>.take(from: source, boxed: false))
    }
    func stop(_ mode: StopMode) { foreign.stop(mode) }
    func failBecauseRequestDeadLettered() { foreign.requestDeadLettered() }
}

extension ActorRef {
    /// A ref whose tells go to `foreign` (F1); asks use `system`; watchers watch
    /// `watchProxy` (F3).
    package init<Proxy: Sendable>(foreign: some ForeignRecipient<Message>, system: ActorSystem,
                                  watchProxy: ActorRef<Proxy>?) {
        self.init(ForeignRecipientAdapter(foreign: foreign, system: system,
                                          watchableCell: watchProxy?.identity.watchableCell))
    }

    /// The foreign recipient behind this ref, nil for a local actor.
    package var foreignRecipient: (any ForeignRecipient<Message>)? {
        if case .foreign(let adapter) = target { adapter.foreign } else { nil }
    }

    /// Tells `message`; false when dead-lettered here (failing a local ask it carried).
    @discardableResult
    package func deliverReportingAcceptance(_ message: Message) -> Bool {
        MessageEncoding<Message>.withMovable(message) { Self.deliver(target, movingFrom: $0) }
    }

    /// An `ask`'s reply slot, answered or not.
    package var isAskReplySlot: Bool { if case .promise = target { true } else { false } }

    /// An `ask`'s reply slot that already ended.
    package var isFinishedAskReplySlot: Bool {
        guard case .promise(let promise) = target else { return false }
        return promise.hasEnded
    }

    /// Fails a pending `ask` whose reply slot this is (`recipientStopped`).
    package func failPendingAsk() {
        pendingAsk?.failBecauseRequestDeadLettered()
    }
}

extension AskPromise {
    var hasEnded: Bool { state.load(ordering: .acquiring) != Self.pending }
}

extension ActorSystem {
    /// F2.
    package func nextForeignActorID() -> ActorID { nextActorID() }

    /// For a message never queued here (counted as sent).
    package func publishForeignDeadLetter<M: Sendable>(_ message: M, recipient: ActorID, recipientName: String,
                                                        reason: DeadLetterReason) {
        publishDeadLetter(message, recipient: recipient, recipientName: recipientName, reason: reason,
                          wasQueued: false)
    }
}
