/// What every recipient answers alike, whatever its message type: identity and control.
/// Declared by non-generic bases, so the existential needs no witness-table look-up.
protocol RecipientIdentity: AnyObject, Sendable {
    /// Identity (equal refs ⇔ equal ids).
    var id: ActorID { get }
    /// The name given at spawn (or a generated one).
    var name: String { get }
    /// The system the recipient belongs to (the one an `ask` through it uses).
    var system: ActorSystem { get }
    /// Messages waiting (a snapshot; 0 for recipients without a mailbox).
    var mailboxDepth: Int { get }
    /// Asks the recipient to stop. Idempotent.
    func stop(_ mode: StopMode)
    /// The cell to register a watch with (nil for recipients that cannot be watched).
    var watchableCell: AnyActorCell? { get }
}

/// Anything an `ActorRef` can point at (internal).
protocol MessageRecipient<Message>: AnyObject, Sendable {
    associatedtype Message: Sendable
    /// How an `ActorRef` holds this recipient (its case of `ActorRef.Target`).
    var refTarget: ActorRef<Message>.Target { get }
    /// Identity (equal refs ⇔ equal ids).
    var id: ActorID { get }
    /// The name given at spawn (or a generated one).
    var name: String { get }
    /// Takes the `Message` at `source` from any thread, never blocking: into the mailbox,
    /// or to dead letters (then returns false).
    @discardableResult func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool
    /// Asks the recipient to stop. Idempotent.
    func stop(_ mode: StopMode)
    /// The cell to register a watch with (nil for recipients that cannot be watched).
    var watchableCell: AnyActorCell? { get }
    /// Messages waiting (a snapshot; 0 for recipients without a mailbox).
    var mailboxDepth: Int { get }
    /// See ``ActorRef/trySend(_:)``.
    func trySend(_ message: consuming Message) -> TrySendResult<Message>
    /// See ``ActorRef/send(_:)``.
    func send(_ message: consuming Message) async throws(SendError<Message>)
}

extension MessageRecipient {
    /// Recipients without a bounded mailbox of their own (pools, ask replies): as `tell`.
    func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        deliver(message)
        return .accepted
    }

    /// As `tell` (see `trySend`).
    func send(_ message: consuming Message) async throws(SendError<Message>) {
        deliver(message)
    }

    /// Delivers `message` (see `deliver(movingFrom:)`).
    @discardableResult
    func deliver(_ message: consuming Message) -> Bool {
        MessageEncoding<Message>.withMovable(message) { deliver(movingFrom: $0) }
    }
}
