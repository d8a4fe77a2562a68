/// Why an actor stopped.
public enum TerminationReason: Sendable, Hashable {
    /// `stop()` from inside or outside, or its parent stopped.
    case stopped
    /// Its supervisor stopped it after a failure (the error's description).
    case failed(String)
    /// The actor system shut down.
    case systemShutDown
    /// A sequential actor's body returned.
    case finished
}

/// Delivered to every watcher when a watched actor stops (see ``ActorContext/watch(_:)``),
/// and the value of ``ActorRef/terminated``.
///
/// Equal exactly when the same actor stopped for the same reason; compare ``id`` to ask
/// only which actor.
public struct Terminated: Sendable, Hashable, CustomStringConvertible {
    /// The actor that stopped.
    public let id: ActorID
    /// Its name.
    public let name: String
    /// Why it stopped.
    public let reason: TerminationReason

    /// The value an actor's stop delivers (public so tests can build expected values).
    public init(id: ActorID, name: String, reason: TerminationReason) {
        self.id = id
        self.name = name
        self.reason = reason
    }

    public var description: String { "Terminated(\(name) \(id), \(reason))" }
}

/// Lifecycle signals an actor can receive besides its messages.
public enum Signal: Sendable {
    /// A watched actor stopped.
    case terminated(Terminated)
}
