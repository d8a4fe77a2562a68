/// A typed, sendable handle to an actor: the only way to talk to it.
///
/// Cheap to copy (one reference), `Sendable`, and `Hashable` by the actor's ``ActorID``.
/// Holding a ref keeps the actor's small cell object alive, not the actor running: a
/// stopped actor's ref still works, and whatever is sent to it goes to dead letters.
public struct ActorRef<Message: Sendable>: Sendable, Hashable, CustomStringConvertible {
    let recipient: any MessageRecipient<Message>

    init(_ recipient: any MessageRecipient<Message>) { self.recipient = recipient }

    /// The actor's identity.
    public var id: ActorID { recipient.id }
    /// The actor's name.
    public var name: String { recipient.name }

    /// Sends `message` without waiting (fire-and-forget).
    ///
    /// - Thread-safety: any thread or task.
    /// - Ordering: messages from one sender (thread, or actor turn) to one actor arrive in
    ///   the order sent. Messages from different senders interleave.
    /// - Cost: never blocks; see <doc:Guarantees#Mailboxes-and-allocation> for what a send
    ///   costs and allocates.
    /// - Stopped actor: the message goes to the system's dead letters (counted, observable).
    /// - Bounded mailbox (spawned with `boundedMailbox: true`) that is full: the message
    ///   goes to dead letters with reason ``DeadLetterReason/mailboxFull``; use
    ///   ``trySend(_:)`` or ``send(_:)`` to get it back or to wait instead.
    @inlinable
    public func tell(_ message: consuming Message) {
        // Specialised in the caller: the message is built in a stack slot and moved into
        // the ring slot by the recipient (MessageEncoding.withMovable).
        MessageEncoding<Message>.withMovable(message) { _deliver(movingFrom: $0) }
    }

    @usableFromInline func _deliver(movingFrom source: UnsafeMutableRawPointer) { recipient.deliver(movingFrom: source) }

    /// Sends `message` if the actor's mailbox has room now; never waits, never overflows.
    ///
    /// - Bounded mailbox (spawned with `boundedMailbox: true`): `.full(message)` when it
    ///   holds its `mailboxCapacity − 1` messages, or when senders wait in ``send(_:)``
    ///   (they keep their turn). Unbounded mailbox: never `.full`.
    /// - Stopped actor: `.stopped(message)`. Either way the message is handed back, never
    ///   dropped. Same ordering and thread-safety as ``tell(_:)``. Pools and other
    ///   recipients without a mailbox of their own behave as ``tell(_:)``.
    public func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        recipient.trySend(message)
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
        try await recipient.send(message)
    }

    /// Stops the actor. Either way the mailbox closes before this returns: later messages
    /// go to dead letters. `.immediately` (default): the actor finishes the message in hand,
    /// the rest goes to dead letters (asks among them fail at once with
    /// ``AskError/recipientStopped(requestID:recipient:)``). `.afterDrainingMailbox`: those
    /// already queued are processed first. Idempotent; any thread.
    public func stop(_ mode: StopMode = .immediately) { recipient.stop(mode) }

    /// Messages waiting in the actor's mailbox (a snapshot).
    public var mailboxDepth: Int { recipient.mailboxDepth }

    public static func == (lhs: ActorRef, rhs: ActorRef) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { "ActorRef<\(Message.self)>(\(name) \(id))" }
}
