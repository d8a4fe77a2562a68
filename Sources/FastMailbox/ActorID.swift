/// The identity of one actor incarnation, unique within the process.
///
/// `ActorRef`s are equal and hash alike exactly when their `ActorID`s are equal. IDs are
/// never reused, so a reference to a stopped actor never aliases a newer one.
public struct ActorID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A process-wide, monotonically assigned number.
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: ActorID, rhs: ActorID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }
}
