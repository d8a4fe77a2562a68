/// A typed, sendable handle to an actor: the only way to talk to it.
///
/// Cheap to copy (one reference), `Sendable`, `Hashable` by ``ActorID``. A ref keeps the
/// actor's small cell alive, not the actor running: sends to a stopped actor go to dead
/// letters.
public struct ActorRef<Message: Sendable>: Sendable, Hashable, CustomStringConvertible {
    /// One class reference per case: a copy is one retain, a send a direct call.
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
    /// `context.myself`: one retain.
    @inlinable init(cell: ActorCellBase<Message>) { self.target = .cell(cell) }

    /// By a switch: the existential would cost a retain and a call.
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

    /// Not used by sends.
    var identity: any RecipientIdentity {
        switch target {
        case .cell(let cell): cell
        case .sequential(let cell): cell
        case .router(let router): router
        case .promise(let promise): promise
        case .foreign(let adapter): adapter
        }
    }

    /// For an `ask`'s reply slot and timer.
    var system: ActorSystem { identity.system }

    /// For an `ask`'s errors.
    @usableFromInline var askTarget: AskTarget {
        switch target {
        case .cell(let cell): .cell(cell)
        case .sequential(let cell): .cell(cell)
        case .router(let router): .cell(router)
        case .promise(let promise): .named(promise.name, system: promise.system)
        case .foreign(let adapter): .named(adapter.name, system: adapter.system)
        }
    }

    /// nil unless an ask reply slot (a foreign one stands for a remote slot).
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
    ///   the order sent.
    /// - Cost: never blocks (<doc:Guarantees#Mailboxes-and-allocation>).
    /// - Stopped actor, or a full bounded mailbox: the message goes to dead letters
    ///   (``DeadLetterReason/mailboxFull`` for the latter; ``trySend(_:)`` and ``send(_:)``
    ///   give it back or wait instead).
    @inlinable
    public func tell(_ message: consuming Message) {
        // Moved from a stack slot into the ring slot.
        MessageEncoding<Message>.withMovable(message) { _deliver(movingFrom: $0) }
    }

    /// The ref keeps the recipient alive: no retain.
    @inlinable func _deliver(movingFrom source: UnsafeMutableRawPointer) {
        Self.deliver(target, movingFrom: source)
    }

    /// False when the message was dead-lettered.
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
    /// - Bounded mailbox: `.full(message)` when it holds `mailboxCapacity − 1` messages or
    ///   senders wait in ``send(_:)``. Otherwise never `.full`.
    /// - Stopped actor: `.stopped(message)`. The message is handed back, never dropped.
    ///   Ordering and thread-safety as ``tell(_:)``; pools behave as ``tell(_:)``.
    public func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        switch target {
        case .cell(let cell): cell.trySend(message)
        case .sequential(let cell): cell.trySend(message)
        case .router(let router): router.trySend(message)
        case .promise(let promise): promise.trySend(message)
        case .foreign(let adapter): adapter.trySend(message)
        }
    }

    /// Sends `message`, waiting for room if the actor's bounded mailbox is full.
    ///
    /// - Waiting senders are served in arrival order, never overtaken by a later `send` or
    ///   ``trySend(_:)``. Per-sender order holds. Unbounded mailbox: never waits.
    /// - Throws: ``SendError/stopped(_:)`` or ``SendError/cancelled(_:)``, handing the
    ///   message back. Pools behave as ``tell(_:)``.
    public func send(_ message: consuming Message) async throws(SendError<Message>) {
        switch target {
        case .cell(let cell): try await cell.send(message)
        case .sequential(let cell): try await cell.send(message)
        case .router(let router): try await router.send(message)
        case .promise(let promise): try await promise.send(message)
        case .foreign(let adapter): try await adapter.send(message)
        }
    }

    /// Stops the actor. The mailbox closes before this returns: later messages are dead
    /// letters, and senders waiting in ``send(_:)`` get ``SendError/stopped(_:)``.
    /// `.immediately` (default): the message in hand is finished, the rest dead-lettered
    /// (pending asks fail at once). `.afterDrainingMailbox`: queued messages are handled
    /// first. Idempotent; any thread.
    public func stop(_ mode: StopMode = .immediately) { identity.stop(mode) }

    /// Messages waiting, plus one while in a turn: the load a router compares. A snapshot.
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
