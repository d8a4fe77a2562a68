import ArgumentParser

/// One benchmark of the suite. Each checks its own result and refuses to report a figure
/// when the check fails; Benchmarks/README.md explains each and how to read it.
enum Workload: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case ring, mailbox, pingpong, threadring, fanin, spawn, parallel, ask, skynet, chameneos, blocking, yield

    /// The workloads of the no-argument headline table (about a minute on 2 cores).
    static let headline: [Workload] = [.pingpong, .threadring, .fanin, .spawn, .parallel, .ask, .skynet]

    /// What it measures, for --help, the tables and the README.
    var summary: String {
        switch self {
        case .ring: "raw ck_ring: spsc (1→1), mpsc (2→1), mpmc (2→2) threads; checks count, sum and per-producer order"
        case .mailbox: "P producer threads → one Mailbox drained by one thread; checks count and per-producer order"
        case .pingpong: "two actors bounce one message N times (latency-bound); checks both sides' counts"
        case .threadring: "503 actors in a ring pass a token N hops; checks the hop count and the actor that ends it"
        case .fanin: "P senders → one receiver, N messages in all; checks count and per-sender order"
        case .spawn: "N actors, one message each: spawns/s, heap and RSS bytes per live actor; checks every delivery"
        case .parallel: "Savina fork-join: 64 actors × N messages, fixed compute per message; checks every actor's checksum"
        case .ask: "request–reply latency (HdrHistogram p50/p90/p99/p99.9), caller inside or outside the pool; checks every reply"
        case .skynet: "a tree of actors, 10 children each, N leaves summing 0..<N; checks the sum"
        case .chameneos: "many-to-many: 100 chameneos pair up through one mall for N meetings; checks 2·N meetings and that all stopped"
        case .blocking: "16 actors × N messages, every 20th makes a 1 ms blocking call: detection off / 10 ms / 1 ms / blocking {}, vs Swift actors; checks every count"
        case .yield: "the scheduler alone: 1000 units, each turn returns .more until N turns in all have run (local queues, stealing); checks every unit's turn count"
        }
    }

    /// The runtimes that implement it, the reference (ratios are to it) first.
    var runtimes: [Runtime] {
        switch self {
        case .ring: [.ckRing, .go]
        case .mailbox: [.fastmailbox, .ckRing, .go]
        case .pingpong, .threadring, .fanin, .spawn, .parallel: [.fastmailbox, .sequential, .mnActor, .swift, .dispatch, .go]
        case .ask: [.fastmailbox, .mnActor, .swift, .dispatch, .go]
        case .skynet: [.fastmailbox, .mnActor, .swift, .go]
        case .chameneos: [.fastmailbox, .dispatch, .go]
        case .blocking: [.fastmailbox, .swift]
        case .yield: [.fastmailbox]
        }
    }

    var reference: Runtime { runtimes[0] }

    /// The parameter a peer program (Go) gets for `variant`: the row's own, except where
    /// rows differ only in FastMailbox's set-up (parallel's driver rows: 64 actors in both).
    func peerParameter(_ variant: Variant) -> Int {
        self == .parallel ? ParallelWorkload.actors(variant.parameter) : variant.parameter
    }

    /// False where a row does not apply to a runtime: the ask caller's place means nothing
    /// to Swift's default pool, Dispatch or Go, which have one pool for callers and actors.
    func applies(to runtime: Runtime, variant: Variant) -> Bool {
        if self == .ask, variant.parameter == 1 { return [.fastmailbox, .mnActor].contains(runtime) }
        if self == .blocking, variant.parameter != 1 { return runtime == .fastmailbox }
        if self == .pingpong, variant.parameter == PingPongWorkload.fireAndForget { return [.fastmailbox, .mnActor, .swift, .dispatch].contains(runtime) }
        if self == .parallel, variant.parameter < 0 { return runtime == .fastmailbox }
        if self == .parallel, variant.parameter == ParallelWorkload.driverActorParameter { return runtime != .dispatch && runtimes.contains(runtime) }
        if self == .spawn, variant.parameter == SpawnWorkload.insidePoolParameter { return runtime != .dispatch && runtimes.contains(runtime) }
        return runtimes.contains(runtime)
    }

    /// True when the headline figure is a latency (lower is better): ratios invert.
    var isLatency: Bool { self == .ask }

    /// What one operation is, for table headers.
    var operationName: String {
        switch self {
        case .ring, .mailbox, .fanin, .parallel, .blocking: "msgs"
        case .chameneos: "meetings"
        case .yield: "turns"
        case .pingpong: "round trips"
        case .threadring: "hops"
        case .spawn: "actors"
        case .ask: "asks"
        case .skynet: "actors"
        }
    }

    /// Where peers' semantics differ from FastMailbox's, the table says so.
    var semanticsNote: String? {
        switch self {
        case .pingpong:
            "Row \"1 pair\": Swift and MN actors: the caller awaits each call (a request–reply, not two fire-and-forget sends); an await on an idle actor runs on the caller's own thread (no queue, no wake-up), so these columns measure a call, not a message between two threads. Row \"1 pair, fire-and-forget\": nobody waits: MN actors send with MNActor.tell, Swift actors start a Task per hop. FastMailbox and Dispatch send the same way in both rows. Go: unbuffered channels. Dispatch: serial queues async-ing to each other."
        case .ask:
            "Swift and MN actors: the caller awaits each call (a request–reply, not two fire-and-forget sends); an await on an idle actor runs on the caller's own thread (no queue, no wake-up), so these columns measure a call, not a message between two threads. FastMailbox's ask allocates a promise and arms a timeout timer per call. Go: unbuffered channels. Dispatch: serial queues async-ing to each other (ask: a semaphore wakes the caller thread)."
        case .threadring:
            "Swift and MN actors: each hop starts a Task that awaits the next actor (Swift actors have no fire-and-forget send; MN actors' MNActor.tell is measured in pingpong's fire-and-forget row). Go: an unbuffered channel per goroutine."
        case .fanin:
            "Swift and MN actors: P tasks await each call (a sender waits for its message to be processed). Go: P goroutines send on one channel buffered to --capacity (a full channel blocks the sender). FastMailbox senders are actors that tell; a full mailbox overflows in order, never blocks. Overflow %, steals, those from a long turn and parks (FastMailbox, medians of the runs): near 100 % and few steals, the sink ran after the senders' turns (a batch); near 100 % and tens of steals, another worker took it from a sender's long turn again and again, each time draining what had piled up; less and many, it ran beside them message by message (streaming, slower at P=1). Benchmarks/README.md, \"Read\", says more."
        case .spawn:
            "FastMailbox's spawner: row \"from outside the pool\", the benchmark's driver thread (each new actor's first turn is handed to a worker through the injection queue); row \"from an actor\", an actor that spawns and tells \(SpawnWorkload.spawnsPerMessage) per message, then tells itself to go on, taking up to MN_THROUGHPUT such messages per turn (the new actors queue on its worker, others steal them). Swift/MN: one task creates the actors and awaits one call on each (in both rows: its spawner is always inside its pool; so is Go's). Dispatch: one serial queue per actor. Go: one goroutine blocked on its own channel per actor. Bytes per actor: heap (mallinfo2; Go: runtime.MemStats.Sys) and RSS growth while all are alive, each run starting after malloc_trim gave free pages back (so no run reuses pages an earlier one faulted in, and each pays its own page faults); FastMailbox event and sequential actors also once idle (after two walks of reclaimIdleMailboxes gave their mailbox rings back), and how long a walk took per actor: the one that asked them, and one over actors already idle (the recurring cost)."
        case .parallel:
            "One driver sends round-robin to 64 workers (Swift/MN: 64 tasks each await their actor's calls). Go workers read buffered channels (--capacity). FastMailbox's driver: row \"64 actors\", the benchmark's thread, outside the pool (at W = CPUs it is one thread more than there are CPUs); row \"driver in the pool\", an actor that sends \(ParallelWorkload.seedsPerDriverMessage) seeds to each of the 64 per message, then tells itself to go on, taking up to MN_THROUGHPUT such messages per turn (Swift's, MN's and Go's code is the same in both rows: their senders are always inside their pool). The pairs row (FastMailbox only) has no driver: 64 producer actors each feed their own worker actor 64 messages per message they handle, all inside the pool."
        case .skynet:
            "Swift and MN columns are structured tasks (a task group per node), not actors; Go: a goroutine and a channel per node."
        case .mailbox:
            "Mailbox.send never blocks (a full ring overflows in order); raw ck_ring uses the yielding multi-producer enqueue and retries when full; Go: a channel buffered to --capacity, which blocks a sender when full."
        case .chameneos:
            "No Swift-actor column: an awaited call cannot wait for a partner without hand-written continuations. Go: the mall is a goroutine reading one unbuffered channel; each chameneo has its own."
        case .ring:
            "Raw ring: producers retry a full enqueue with backoff. Go: a channel buffered to --capacity."
        case .yield:
            "No peers: the units are bare MNScheduler ScheduledUnits (no mailbox, no actor), scheduled from the driver thread; the FastMailbox column is the scheduler that FastMailbox runs on."
        case .blocking:
            "Swift actors (default executor) run in the detection-on row only: their cooperative pool has no detection or blocking section to switch. Rows differ only in MN_BLOCKING_THRESHOLD_MS (0 = off) and whether the call is wrapped in blocking {}."
        }
    }

    /// Parameter sweep: one row per value (producers for ring, mailbox and fanin; the ask
    /// caller's place; 1 elsewhere).
    func variants(producers: [Int]?, scale: Scale) -> [Variant] {
        switch self {
        case .ring: [Variant(name: "spsc 1→1", parameter: 1), Variant(name: "mpsc 2→1", parameter: 2), Variant(name: "mpmc 2→2", parameter: 3)]
        case .mailbox: (producers ?? [1, 2, 4]).map { Variant(name: "P=\($0)", parameter: $0) }
        case .fanin: (producers ?? (scale == .full ? [1, 4, 16, 64] : [1, 64])).map { Variant(name: "P=\($0)", parameter: $0) }
        case .ask: [Variant(name: "caller outside pool", parameter: 0), Variant(name: "caller inside pool", parameter: 1)]
        case .parallel: [Variant(name: "64 actors", parameter: 64),
                         Variant(name: "64 actors, driver in the pool", parameter: ParallelWorkload.driverActorParameter),
                         Variant(name: "64 pairs, no driver", parameter: -64)]
        case .threadring: [Variant(name: "503 actors", parameter: 503)]
        case .pingpong: [Variant(name: "1 pair", parameter: 1), Variant(name: "1 pair, fire-and-forget", parameter: PingPongWorkload.fireAndForget)]
        case .spawn: [Variant(name: "from outside the pool", parameter: 0),
                      Variant(name: "from an actor", parameter: SpawnWorkload.insidePoolParameter)]
        case .skynet: [Variant(name: "", parameter: 0)]
        case .chameneos: [Variant(name: "100 chameneos", parameter: 100)]
        case .yield: [Variant(name: "1000 units", parameter: 1000)]
        case .blocking: [Variant(name: "detection off", parameter: 0), Variant(name: "detection on (10 ms)", parameter: 1),
                         Variant(name: "detection at 1 ms", parameter: 3), Variant(name: "blocking {}", parameter: 2)]
        }
    }

    /// Operations per run (per actor for `parallel`; leaves for `skynet`, a power of 10).
    func size(_ scale: Scale) -> Int {
        switch (self, scale) {
        case (.ring, .quick), (.mailbox, .quick), (.fanin, .quick): 100_000
        case (.ring, .headline), (.mailbox, .headline): 1_000_000
        case (.fanin, .headline): 500_000
        case (.ring, .full), (.mailbox, .full), (.fanin, .full): 2_000_000
        case (.pingpong, .quick): 10_000
        case (.pingpong, .headline): 30_000
        case (.pingpong, .full): 200_000
        case (.threadring, .quick): 50_000
        case (.threadring, .headline): 100_000
        case (.threadring, .full): 1_000_000
        case (.spawn, .quick): 20_000
        case (.spawn, .headline): 100_000
        case (.spawn, .full): 1_000_000
        case (.parallel, .quick): 1_000
        case (.parallel, .headline): 5_000
        case (.parallel, .full): 20_000
        case (.ask, .quick): 5_000
        case (.ask, .headline): 20_000
        case (.ask, .full): 100_000
        case (.skynet, .quick): 10_000
        case (.skynet, .headline): 100_000
        case (.skynet, .full): 1_000_000
        case (.chameneos, .quick): 10_000
        case (.chameneos, .headline): 100_000
        case (.chameneos, .full): 200_000
        case (.blocking, .quick): 200
        case (.blocking, .headline): 1_000
        case (.blocking, .full): 4_000
        case (.yield, .quick): 200_000
        case (.yield, .headline): 2_000_000
        case (.yield, .full): 10_000_000
        }
    }
}

/// How big the runs are: `--quick` (CI smoke), the headline table, or `--suite full`.
enum Scale: String, Codable, Sendable {
    case quick, headline, full
}

/// One row of a workload's table.
struct Variant: Hashable, Codable, Sendable {
    var name: String
    var parameter: Int
}
