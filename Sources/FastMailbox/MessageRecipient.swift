/// Identity and control, alike for every recipient whatever its message type (declared
/// by non-generic bases: no witness-table look-up).
protocol RecipientIdentity: AnyObject, Sendable {
    /// Equal refs ⇔ equal ids.
    var id: ActorID { get }
    var name: String { get }
    /// The system an `ask` through it uses.
    var system: ActorSystem { get }
    /// A snapshot; 0 without a mailbox.
    var mailboxDepth: Int { get }
    /// Idempotent.
    func stop(_ mode: StopMode)
    /// nil when it cannot be watched.
    var watchableCell: AnyActorCell? { get }
}

/// Anything an `ActorRef` can point at (internal).
protocol MessageRecipient<Message>: AnyObject, Sendable {
    associatedtype Message: Sendable
    /// Its case of `ActorRef.Target`.
    var refTarget: ActorRef<Message>.Target { get }
    /// Equal refs ⇔ equal ids.
    var id: ActorID { get }
    var name: String { get }
    /// Takes the `Message` at `source`, any thread, never blocking; false if dead-lettered.
    @discardableResult func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool
    /// Idempotent.
    func stop(_ mode: StopMode)
    /// nil when it cannot be watched.
    var watchableCell: AnyActorCell? { get }
    /// A snapshot; 0 without a mailbox.
    var mailboxDepth: Int { get }
    /// See ``ActorRef/trySend(_:)``.
    func trySend(_ message: consuming Message) -> TrySendResult<Message>
    /// See ``ActorRef/send(_:)``.
    func send(_ message: consuming Message) async throws(SendError<Message>)
}

extension MessageRecipient {
    /// Without a bounded mailbox of their own (pools, ask replies): as `tell`.
    func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        deliver(message)
        return .accepted
    }

    /// As `tell`.
    func send(_ message: consuming Message) async throws(SendError<Message>) {
        deliver(message)
    }

    /// See `deliver(movingFrom:)`.
    @discardableResult
    func deliver(_ message: consuming Message) -> Bool {
        MessageEncoding<Message>.withMovable(message) { deliver(movingFrom: $0) }
    }
}
