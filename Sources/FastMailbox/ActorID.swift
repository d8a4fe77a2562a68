/// The identity of one actor incarnation, unique within the process.
///
/// Refs are equal exactly when their ids are; ids are never reused.
public struct ActorID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A process-wide, monotonically assigned number.
    public let rawValue: UInt64

    /// The identity with this number (to name an actor you know, e.g. from a log).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: ActorID, rhs: ActorID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }

    /// A seeded splitmix64 finaliser instead of SipHash: ids are our own counter, not
    /// outside input. `hash(into:)` is unchanged.
    public func _rawHashValue(seed: Int) -> Int {
        var x = rawValue ^ UInt64(bitPattern: Int64(seed))
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(bitPattern: UInt(truncatingIfNeeded: x ^ (x >> 31)))
    }
}
