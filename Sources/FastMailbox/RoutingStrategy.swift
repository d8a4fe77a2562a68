/// How a pool's router picks the routee for each message (``SpawnOptions/pool``).
///
/// Stopped routees are skipped; when all have stopped, the message is a dead letter.
/// Depths are lock-free snapshots: under concurrent senders the choice is a good guess.
public enum RoutingStrategy: Sendable, Equatable, CustomStringConvertible {
    /// Routee `k mod n` for the k-th message: an even spread for one sender, wait-free.
    case roundRobin
    /// The routee with the smallest mailbox depth (the message in hand counts); ties go
    /// round-robin. Reads up to `n` depths per message.
    case leastLoaded
    /// The first routee with an empty mailbox, else as ``leastLoaded``: work stays on as
    /// few routees as keep up.
    case firstIdle

    public var description: String {
        switch self {
        case .roundRobin: return "round-robin"
        case .leastLoaded: return "least-loaded"
        case .firstIdle: return "first-idle"
        }
    }

    /// The routee to use among `count`, given each one's depth (nil: stopped) and the
    /// message's `cursor`; nil when all stopped. The router's whole decision, pure.
    @usableFromInline func select(count: Int, cursor: UInt, depth: (Int) -> Int?) -> Int? {
        guard count > 0 else { return nil }
        let start = Int(cursor % UInt(count))
        switch self {
        case .roundRobin:
            for offset in 0..<count {
                let index = (start + offset) % count
                if depth(index) != nil { return index }
            }
            return nil
        case .leastLoaded:
            return RoutingStrategy.leastLoaded(count: count, start: start, depth: depth)
        case .firstIdle:
            for index in 0..<count where depth(index) == 0 { return index }
            return RoutingStrategy.leastLoaded(count: count, start: start, depth: depth)
        }
    }

    private static func leastLoaded(count: Int, start: Int, depth: (Int) -> Int?) -> Int? {
        var best: (index: Int, depth: Int)?
        for offset in 0..<count {
            let index = (start + offset) % count
            guard let d = depth(index) else { continue }
            if d == 0 { return index }
            if best == nil || d < best!.depth { best = (index, d) }
        }
        return best?.index
    }
}
