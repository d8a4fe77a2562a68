/// The identity of one actor incarnation, unique within the process.
///
/// `ActorRef`s are equal and hash alike exactly when their `ActorID`s are equal. IDs are
/// never reused, so a reference to a stopped actor never aliases a newer one.
public struct ActorID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A process-wide, monotonically assigned number.
    public let rawValue: UInt64

    /// The identity with this number. The runtime assigns them; make one only to name an
    /// actor you already know, such as one read back from a log.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: ActorID, rhs: ActorID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }

    /// The hash a `Dictionary` or `Set` of ActorIDs uses: a seeded splitmix64 finaliser of
    /// the id instead of SipHash. IDs come from this process's counter, not from outside
    /// input, so SipHash's resistance to chosen keys buys nothing; the per-process seed
    /// still varies the order. `hash(into:)` is unchanged.
    public func _rawHashValue(seed: Int) -> Int {
        var x = rawValue ^ UInt64(bitPattern: Int64(seed))
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(bitPattern: UInt(truncatingIfNeeded: x ^ (x >> 31)))
    }
}
