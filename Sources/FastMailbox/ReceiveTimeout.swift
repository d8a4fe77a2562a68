/// Thrown by ``Inbox/receive(timeout:)`` and ``Inbox/receive(timeout:where:)`` when no
/// (matching) message arrived within the timeout.
///
/// Nothing is lost: a message that arrives after the timeout stays in the inbox for the
/// next receive, and messages skipped by a selective receive stay buffered in order.
public struct ReceiveTimeout: Error, Sendable, Equatable, CustomStringConvertible {
    /// The timeout that passed.
    public let timeout: Duration
    /// The receiving actor's name.
    public let actorName: String
    /// The receiving actor's identity.
    public let actorID: ActorID

    public var description: String {
        "receive in actor '\(actorName)' \(actorID) timed out after \(timeout)"
    }
}
