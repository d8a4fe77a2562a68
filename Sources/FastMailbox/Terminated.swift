/// Why an actor stopped.
public enum TerminationReason: Sendable, Equatable {
    /// `stop()` from inside or outside, or its parent stopped.
    case stopped
    /// Its supervisor stopped it after a failure (the error's description).
    case failed(String)
    /// The actor system shut down.
    case systemShutDown
    /// A sequential actor's body returned.
    case finished
}

/// Delivered to every watcher when a watched actor stops (see `ActorContext.watch(_:)`).
public struct Terminated: Sendable, Hashable, CustomStringConvertible {
    /// The actor that stopped.
    public let id: ActorID
    /// Its name.
    public let name: String
    /// Why it stopped.
    public let reason: TerminationReason

    public static func == (lhs: Terminated, rhs: Terminated) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { "Terminated(\(name) \(id), \(reason))" }
}

/// Lifecycle signals an actor can receive besides its messages.
public enum Signal: Sendable {
    /// A watched actor stopped.
    case terminated(Terminated)
}
