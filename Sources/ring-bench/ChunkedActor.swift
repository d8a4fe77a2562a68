import FastMailbox

/// An actor that works through 0..<total a chunk per message: each message hands `body`
/// the next `perMessage` indices (fewer for the last), then the actor tells itself where to
/// go on. Its drain usually takes that message in the same turn, so a turn runs up to the
/// scheduler's throughput (MN_THROUGHPUT) chunks before its worker moves on: bounded, where
/// one message for the whole range would make one long turn (the blocking monitor would
/// hand the worker's queued units to a spare). The work stays inside the pool, as a parent
/// actor's loop would. Start it with `tell(0)`; the last range `body` gets ends at `total`.
enum ChunkedActor {
    static func spawn(in system: ActorSystem, total: Int, perMessage: Int,
                      _ body: @escaping @Sendable (Range<Int>) -> Void) -> ActorRef<Int> {
        try! system.spawn { (from: Int, context: ActorContext<Int>) in
            let end = min(from + perMessage, total)
            body(from..<end)
            if end < total { context.myself.tell(end) }
        }
    }
}
