// spawn: create `size` actors and send each one message, all alive at once. Reports
// actors per second (spawn + first message) and, in extras, the heap and RSS growth per
// live actor. Check: every actor received its message (a count, and a sum of the payloads).
// Two rows for FastMailbox: the spawner is a thread outside the pool (the benchmark's
// driver), or an actor inside it (`insidePool`), as a parent actor spawns its children and
// as Swift's and Go's spawners are (a task on Swift's pool, a goroutine) in both rows.
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum SpawnWorkload {
    /// Counts deliveries and sums their payloads.
    /// The spawning thread retains it per actor (the closure it hands over captures it: a
    /// write to the object's header) while the actors' threads read `latch` and add to
    /// `sum`: everything a receive touches sits at least a line (64 bytes) past the header,
    /// so the two threads do not pass one line back and forth per actor (the same
    /// instrument measures every runtime; Swift's actors receive on the spawning thread).
    final class Tally: Sendable {
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        let latch: Latch
        let total: Int
        let sum = Atomic<Int>(0)
        private let paddingAfter: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        init(total: Int) { self.total = total; latch = Latch(total) }
        func receive(_ value: Int) {
            sum.wrappingAdd(value, ordering: .relaxed)
            latch.countDown()
        }
        func check(finished: Bool) -> String? {
            if !finished { return "\(total - latch.count) of \(total) actors got their message" }
            let expected = total * (total - 1) / 2
            let got = sum.load(ordering: .acquiring)
            return got == expected ? nil : "payload sum \(got), expected \(expected)"
        }
    }

    /// Memory before the timed part; growth is divided by the number of live actors.
    struct Baseline {
        let heap: Int
        let resident: Int
        init() {
            MemoryProbe.returnFreePages()  // else an earlier run's freed pages absorb this one's growth
            heap = MemoryProbe.heapBytes()
            resident = MemoryProbe.residentBytes()
        }
        func perActor(_ count: Int) -> [String: Double] {
            ["heap_bytes_per_actor": Double(MemoryProbe.heapBytes() - heap) / Double(count),
             "rss_bytes_per_actor": Double(MemoryProbe.residentBytes() - resident) / Double(count)]
        }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let count = cell.size
        let tally = Tally(total: count)
        let insidePool = cell.variant.parameter == insidePoolParameter
        switch cell.runtime {
        case .fastmailbox:
            return fastMailboxActors(count: count, tally: tally, workers: cell.workers, reclaim: true,
                                     insidePool: insidePool) { system in
                try! system.spawn { (value: Int, _: ActorContext<Int>) in tally.receive(value) }
            }
        case .sequential:
            return fastMailboxActors(count: count, tally: tally, workers: cell.workers, reclaim: true,
                                     insidePool: insidePool) { system in
                try! system.spawn { (inbox: Inbox<Int>) in
                    tally.receive(try await inbox.receive())
                    for await _ in inbox {}  // stay alive until shutdown
                }
            }
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return native(count: count, tally: tally, caller: scheduler.taskExecutor) {
                MNSpawnedActor(tally: tally, executor: MNSerialExecutor(scheduler: scheduler))
            }
        case .swift:
            return native(count: count, tally: tally, caller: nil) { DefaultSpawnedActor(tally: tally) }
        case .dispatch:
            var queues: [DispatchQueue] = []
            queues.reserveCapacity(count)
            let base = Baseline()
            let t0 = Clock.now()
            for i in 0..<count {
                let queue = DispatchQueue(label: "actor")
                queue.async { tally.receive(i) }
                queues.append(queue)
            }
            let finished = tally.latch.wait()
            return .timed(since: t0, operations: count, check: tally.check(finished: finished), extras: base.perActor(count))
        default:
            return .failed("spawn has no \(cell.runtime) implementation")
        }
    }

    /// The variant parameter of the row whose FastMailbox spawner is an actor.
    static let insidePoolParameter = 1

    /// Children the spawner actor makes per message (`insidePool`: a ChunkedActor).
    static let spawnsPerMessage = 64

    /// What the spawner actor leaves for the driver: the refs (kept alive until measured),
    /// its loop's wall and CPU time, and a latch for its last turn. Written by the spawner's
    /// turns only (one at a time), read by the driver after `done`.
    final class SpawnerState: @unchecked Sendable {
        var refs: [ActorRef<Int>] = []
        var loopNanoseconds: UInt64 = 0
        var loopCPUNanoseconds: UInt64 = 0
        let done = Latch(1)

        /// Spawns an actor for each of `values`, tells it its value and keeps its ref.
        func spawnAndTell(_ values: Range<Int>, in system: ActorSystem, _ spawn: (ActorSystem) -> ActorRef<Int>) {
            for i in values {
                let ref = spawn(system)
                ref.tell(i)
                refs.append(ref)
            }
        }
    }

    /// FastMailbox event or sequential actors: `count` spawned by `spawn`, one tell each, all
    /// kept alive until the run is timed and measured. `insidePool`: the spawning and the
    /// tells are a spawner actor's messages (`spawnsPerMessage` each) instead of this thread's.
    /// `reclaim`: then also `heap_bytes_per_actor_reclaimed`, the heap growth per actor once
    /// every idle actor gave its mailbox ring back (two walks, their release turns — a
    /// sequential actor's body, woken, gives it back before it parks again — and the grace
    /// period).
    static func fastMailboxActors(count: Int, tally: Tally, workers: Int, reclaim: Bool = false, insidePool: Bool = false,
                       spawn: @escaping @Sendable (ActorSystem) -> ActorRef<Int>) -> RunOutcome {
        let system = Blocking.system(workers: workers)
        defer { _ = system.shutdown(timeout: .seconds(60)) }
        let state = SpawnerState()
        state.refs.reserveCapacity(count)
        let spawner = insidePool ? ChunkedActor.spawn(in: system, total: count, perMessage: spawnsPerMessage) { range in
            let cpu0 = threadCPUNanoseconds()
            let start = Clock.now()  // after the driver's t0, which started the CPU meter
            state.spawnAndTell(range, in: system, spawn)
            state.loopNanoseconds += Clock.now() - start
            state.loopCPUNanoseconds += threadCPUNanoseconds() - cpu0
            if range.upperBound == count { state.done.countDown() }
        } : nil
        let base = Baseline()
        let cpu0 = threadCPUNanoseconds()
        let t0 = Clock.now()
        if let spawner {
            spawner.tell(0)
        } else {
            state.spawnAndTell(0..<count, in: system, spawn)
            state.loopNanoseconds = Clock.now() - t0
            state.loopCPUNanoseconds = threadCPUNanoseconds() - cpu0
        }
        let finished = tally.latch.wait() && (spawner == nil || state.done.wait())
        var outcome = RunOutcome.timed(since: t0, operations: count, check: tally.check(finished: finished),
                                       extras: base.perActor(count))
        // The spawner's share: its wall time in the loop, and its own CPU time there (not
        // counting time it was preempted: steadier on a loaded machine).
        outcome.extras["spawn_loop_ns_per_actor"] = Double(state.loopNanoseconds) / Double(count)
        outcome.extras["spawn_loop_cpu_ns_per_actor"] = Double(state.loopCPUNanoseconds) / Double(count)
        if reclaim, outcome.failure == nil {  // after the timed part
            let (bytes, walkNanoseconds) = reclaimedHeapPerActor(system, count: count, base: base)
            outcome.extras["heap_bytes_per_actor_reclaimed"] = bytes
            outcome.extras["reclaim_walk_ns_per_actor"] = walkNanoseconds / Double(count)
            // A walk over actors that have nothing left to give back: what the automatic
            // walk costs every interval once they are all idle.
            let idleStart = Clock.now()
            system.reclaimIdleMailboxes()
            outcome.extras["idle_walk_ns_per_actor"] = Double(Clock.now() - idleStart) / Double(count)
        }
        withExtendedLifetime(state) {}
        return outcome
    }

    /// CPU time of the calling thread, in nanoseconds.
    static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Walks twice (the first only snapshots the taken counts), waits for the release turns
    /// the second walk asked for and the grace period, and returns the heap growth per actor
    /// since `base` and how long the second walk (the one that asks every actor holding a
    /// ring) took, in nanoseconds.
    static func reclaimedHeapPerActor(_ system: ActorSystem, count: Int, base: Baseline) -> (Double, Double) {
        let before = system.idleMailboxRingsReleased
        system.reclaimIdleMailboxes()
        let walkStart = Clock.now()
        let requested = system.reclaimIdleMailboxes()
        let walk = Double(Clock.now() - walkStart)
        let deadline = Clock.now() + 60_000_000_000
        while system.idleMailboxRingsReleased - before < requested, Clock.now() < deadline { usleep(1_000) }
        while RingEpoch.collect(wait: true) > 0, Clock.now() < deadline { usleep(1_000) }
        return (Double(MemoryProbe.heapBytes() - base.heap) / Double(count), walk)
    }

    static func native<A: SpawnedActor>(count: Int, tally: Tally, caller: (any TaskExecutor)?,
                                        make: @escaping @Sendable () -> A) -> RunOutcome {
        let (t0, extras, actors) = Blocking.run(on: caller) { () async -> (UInt64, [String: Double], [A]) in
            var actors: [A] = []
            actors.reserveCapacity(count)
            let base = Baseline()
            let t0 = Clock.now()
            for i in 0..<count {
                let actor = make()
                await actor.receive(i)
                actors.append(actor)
            }
            var extras = base.perActor(count)
            extras["spawn_loop_ns_per_actor"] = Double(Clock.now() - t0) / Double(count)
            return (t0, extras, actors)
        }
        let finished = tally.latch.wait()
        let outcome = RunOutcome.timed(since: t0, operations: count, check: tally.check(finished: finished), extras: extras)
        withExtendedLifetime(actors) {}
        return outcome
    }
}

protocol SpawnedActor: Actor {
    var tally: SpawnWorkload.Tally { get }
}

extension SpawnedActor {
    func receive(_ value: Int) { tally.receive(value) }
}

actor DefaultSpawnedActor: SpawnedActor {
    let tally: SpawnWorkload.Tally
    init(tally: SpawnWorkload.Tally) { self.tally = tally }
}

actor MNSpawnedActor: SpawnedActor {
    let tally: SpawnWorkload.Tally
    let executor: MNSerialExecutor
    init(tally: SpawnWorkload.Tally, executor: MNSerialExecutor) { self.tally = tally; self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
