/// How an actor stops.
public enum StopMode: Sendable, Equatable {
    /// After the message being processed (if any): messages still in the mailbox and every
    /// later one go to dead letters.
    case immediately
    /// The mailbox is closed now (later messages go to dead letters), the actor processes
    /// what was already in it, then stops.
    case afterDrainingMailbox
}
