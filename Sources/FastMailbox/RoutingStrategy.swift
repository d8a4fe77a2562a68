/// How a pool's router picks the routee for each message
/// (see ``SpawnOptions/pool``).
///
/// Routees that have stopped (mailbox closed) are skipped by every strategy; when all have,
/// the message goes to dead letters. Depths are snapshots read without locks, so under
/// concurrent senders the choice is a good guess, never a guarantee.
public enum RoutingStrategy: Sendable, Equatable, CustomStringConvertible {
    /// Routee `k mod n` for the k-th message sent to the pool (one atomic increment per
    /// message): an exact, even spread for one sender, and wait-free.
    case roundRobin
    /// The routee with the smallest mailbox depth (a message being processed counts until
    /// its batch ends). Ties are broken round-robin, so idle routees share the work.
    /// Reads up to `n` depths per message.
    case leastLoaded
    /// The first routee (lowest index) with an empty mailbox, else as ``leastLoaded``:
    /// keeps the work on as few routees as possible while they keep up.
    case firstIdle

    public var description: String {
        switch self {
        case .roundRobin: return "round-robin"
        case .leastLoaded: return "least-loaded"
        case .firstIdle: return "first-idle"
        }
    }

    /// The index of the routee to use among `count`, given each one's mailbox depth (nil for
    /// a stopped routee) and a per-message `cursor` (0, 1, 2, … for successive messages).
    /// Nil when every routee has stopped. Pure: the router's whole routing decision.
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
