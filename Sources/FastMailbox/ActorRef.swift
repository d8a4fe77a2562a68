/// A typed, sendable handle to an actor: the only way to talk to it.
///
/// Cheap to copy (one reference), `Sendable`, and `Hashable` by the actor's ``ActorID``.
/// Holding a ref keeps the actor's small cell object alive, not the actor running: a
/// stopped actor's ref still works, and whatever is sent to it goes to dead letters.
public struct ActorRef<Message: Sendable>: Sendable, Hashable, CustomStringConvertible {
    /// What a ref points at: one of the package's recipient classes. Every payload is one
    /// native class reference, so the enum is one word and a copy is one retain. A send
    /// switches on the case and calls the class's `final` deliver directly. Adding a kind
    /// of recipient means adding a case here.
    @usableFromInline enum Target: Sendable {
        case cell(ActorCellBase<Message>)
        case sequential(SequentialActorCell<Message>)
        case router(Router<Message>)
        case promise(AskPromise<Message>)
        case foreign(ForeignRecipientAdapter<Message>)
    }
    @usableFromInline let target: Target

    @usableFromInline init(target: Target) { self.target = target }
    init(_ recipient: any MessageRecipient<Message>) { self.target = recipient.refTarget }
    /// The ref of an event actor's cell (`context.myself`): one retain.
    @inlinable init(cell: ActorCellBase<Message>) { self.target = .cell(cell) }

    /// The actor's identity, by a switch of its own: refs are hashed and compared by it,
    /// and the existential would cost a retain, a release and an indirect call.
    public var id: ActorID {
        switch target {
        case .cell(let cell): cell.id
        case .sequential(let cell): cell.id
        case .router(let router): router.id
        case .promise(let promise): promise.id
        case .foreign(let adapter): adapter.id
        }
    }
    /// The actor's name.
    public var name: String { identity.name }

    /// The recipient's identity and control operations. RecipientIdentity, not the generic
    /// MessageRecipient, which would cost a witness-table look-up each time. Sends do not
    /// use it: they switch on `target`.
    var identity: any RecipientIdentity {
        switch target {
        case .cell(let cell): cell
        case .sequential(let cell): cell
        case .router(let router): router
        case .promise(let promise): promise
        case .foreign(let adapter): adapter
        }
    }

    /// The system the recipient belongs to (the one an `ask` through this ref uses for its
    /// reply slot and timer). Every kind of recipient has one.
    var system: ActorSystem { identity.system }

    /// Whom an `ask` through this ref asks, for its errors (AskTarget): a switch, no
    /// existential, and no name formatted unless an error needs it.
    @usableFromInline var askTarget: AskTarget {
        switch target {
        case .cell(let cell): .cell(cell)
        case .sequential(let cell): .cell(cell)
        case .router(let router): .cell(router)
        case .promise(let promise): .named(promise.name, system: promise.system)
        case .foreign(let adapter): .named(adapter.name, system: adapter.system)
        }
    }

    /// The ask reply slot behind this ref, answered or not (nil for any other recipient);
    /// a foreign recipient stands for a remote reply slot (see ForeignRecipient).
    var pendingAsk: (any AskFailing)? {
        switch target {
        case .promise(let promise): promise
        case .foreign(let adapter): adapter
        case .cell, .sequential, .router: nil
        }
    }

    /// Sends `message` without waiting (fire-and-forget).
    ///
    /// - Thread-safety: any thread or task.
    /// - Ordering: messages from one sender (thread, or actor turn) to one actor arrive in
    ///   the order sent. Messages from different senders interleave.
    /// - Cost: never blocks; see <doc:Guarantees#Mailboxes-and-allocation> for what a send
    ///   costs and allocates.
    /// - Stopped actor: the message goes to the system's dead letters (counted, observable).
    /// - Bounded mailbox (spawned with `mailboxKind: .bounded`) that is full: the message
    ///   goes to dead letters with reason ``DeadLetterReason/mailboxFull``; use
    ///   ``trySend(_:)`` or ``send(_:)`` to get it back or to wait instead.
    @inlinable
    public func tell(_ message: consuming Message) {
        // Specialised in the caller: the message is built in a stack slot and moved into
        // the ring slot by the recipient (MessageEncoding.withMovable).
        MessageEncoding<Message>.withMovable(message) { _deliver(movingFrom: $0) }
    }

    /// One message moved out of `source` into the recipient: a direct call per kind.
    /// The ref itself keeps the recipient alive for the call, so the switch borrows the
    /// target: no retain/release pair per message.
    @inlinable func _deliver(movingFrom source: UnsafeMutableRawPointer) {
        Self.deliver(target, movingFrom: source)
    }

    /// Returns false when the message was dead-lettered (`ask` needs to know; a tell
    /// ignores it).
    @inlinable @discardableResult
    static func deliver(_ target: borrowing Target, movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch target {
        case .cell(let cell): cell.deliver(movingFrom: source)
        case .sequential(let cell): cell.deliver(movingFrom: source)
        case .router(let router): router.deliver(movingFrom: source)
        case .promise(let promise): promise.deliver(movingFrom: source)
        case .foreign(let adapter): adapter.deliver(movingFrom: source)
        }
    }

    /// Sends `message` if the actor's mailbox has room now; never waits, never overflows.
    ///
    /// - Bounded mailbox (spawned with `mailboxKind: .bounded`): `.full(message)` when it
    ///   holds its `mailboxCapacity − 1` messages, or when senders wait in ``send(_:)``
    ///   (they keep their turn). Unbounded mailbox: never `.full`.
    /// - Stopped actor: `.stopped(message)`. Either way the message is handed back, never
    ///   dropped. Same ordering and thread-safety as ``tell(_:)``. Pools and other
    ///   recipients without a mailbox of their own behave as ``tell(_:)``.
    public func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        switch target {
        case .cell(let cell): cell.trySend(message)
        case .sequential(let cell): cell.trySend(message)
        case .router(let router): router.trySend(message)
        case .promise(let promise): promise.trySend(message)
        case .foreign(let adapter): adapter.trySend(message)
        }
    }

    /// Sends `message`, waiting for room if the actor's bounded mailbox is full
    /// (back-pressure).
    ///
    /// - Waiting senders are served in the order they started waiting, and none is
    ///   overtaken by a later `send` or ``trySend(_:)``; the actor moves their messages in
    ///   as it frees room. Messages from one sender arrive in the order sent.
    /// - Unbounded mailbox: never waits.
    /// - Throws: ``SendError/stopped(_:)`` if the actor stops before the message got in,
    ///   ``SendError/cancelled(_:)`` if the task is cancelled while it waits; both hand the
    ///   message back. Pools and other recipients without a mailbox of their own behave as
    ///   ``tell(_:)``.
    public func send(_ message: consuming Message) async throws(SendError<Message>) {
        switch target {
        case .cell(let cell): try await cell.send(message)
        case .sequential(let cell): try await cell.send(message)
        case .router(let router): try await router.send(message)
        case .promise(let promise): try await promise.send(message)
        case .foreign(let adapter): try await adapter.send(message)
        }
    }

    /// Stops the actor. Either way the mailbox closes before this returns: later messages
    /// go to dead letters. `.immediately` (default): the actor finishes the message in hand,
    /// the rest goes to dead letters (asks among them fail at once with
    /// ``AskError/recipientStopped(requestID:recipient:)``). `.afterDrainingMailbox`: those
    /// already queued are processed first. Either way senders waiting in ``send(_:)`` for
    /// room in a bounded mailbox get ``SendError/stopped(_:)`` with their messages before
    /// this returns, even while the actor is still inside a turn. Idempotent; any thread.
    public func stop(_ mode: StopMode = .immediately) { identity.stop(mode) }

    /// Messages waiting in the actor's mailbox, plus one while the actor is in a turn (the
    /// message in hand): the load a router compares. A snapshot.
    public var mailboxDepth: Int { identity.mailboxDepth }

    public static func == (lhs: ActorRef, rhs: ActorRef) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { "ActorRef<\(Message.self)>(\(name) \(id))" }
}

// The recipient classes, each in its case of `ActorRef.Target`.
extension ActorCellBase { var refTarget: ActorRef<Message>.Target { .cell(self) } }
extension SequentialActorCell { var refTarget: ActorRef<Message>.Target { .sequential(self) } }
extension Router { var refTarget: ActorRef<Message>.Target { .router(self) } }
extension AskPromise { var refTarget: ActorRef<Reply>.Target { .promise(self) } }
extension ForeignRecipientAdapter { var refTarget: ActorRef<Message>.Target { .foreign(self) } }
