import FastMailbox

/// An actor that works through 0..<total a chunk per turn: each turn hands `body` the next
/// `perTurn` indices (fewer for the last), then the actor tells itself where to go on. So
/// no turn is long (a turn of a million sends or spawns would be one: the blocking monitor
/// would hand the worker's queued units to a spare), and the work stays inside the pool, as
/// a parent actor's loop would. Start it with `tell(0)`; the last range `body` gets ends at
/// `total`.
enum ChunkedActor {
    static func spawn(in system: ActorSystem, total: Int, perTurn: Int,
                      _ body: @escaping @Sendable (Range<Int>) -> Void) -> ActorRef<Int> {
        try! system.spawn { (from: Int, context: ActorContext<Int>) in
            let end = min(from + perTurn, total)
            body(from..<end)
            if end < total { context.myself.tell(end) }
        }
    }
}
