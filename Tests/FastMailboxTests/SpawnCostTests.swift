// Spawn cost: heap allocations per actor at each stage of its life (spawn, first turn with
// one message, stop), counted on the test's thread with MallocCounter: every turn runs
// there (DeterministicScheduler). Counts, never time.

import MallocCounter
import MNScheduler
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Spawn cost")
struct SpawnCostTests {
    /// Allocations per actor of each stage, over `count` closure actors whose closure
    /// captures nothing (so the caller allocates no closure context).
    struct StageAllocations: CustomStringConvertible {
        var spawn = 0.0, firstMessage = 0.0, stop = 0.0
        var description: String { "spawn \(spawn), first message \(firstMessage), stop \(stop)" }
    }

    static func measure(count: Int, named: Bool = false) throws -> StageAllocations {
        let deterministic = DeterministicScheduler(seed: 21)
        let system = makeDeterministicSystem(deterministic)
        var refs: [ActorRef<Int>] = []
        refs.reserveCapacity(count)
        // Warm-up: metadata, registry capacity, the scheduler's queues.
        let warm = try (0..<count).map { i in try system.spawn(options: SpawnOptions(name: named ? "warm\(i)" : nil)) { (_: Int, _) in } }
        for ref in warm { ref.tell(1) }
        try deterministic.runUntilQuiescent()
        for ref in warm { ref.stop() }
        try deterministic.runUntilQuiescent()

        var stages = StageAllocations()
        let names = (0..<count).map { "actor\($0)" }
        var start = malloc_counter_thread_allocations()
        for i in 0..<count { refs.append(try system.spawn(options: SpawnOptions(name: named ? names[i] : nil)) { (_: Int, _) in }) }
        stages.spawn = Double(malloc_counter_thread_allocations() - start) / Double(count)
        start = malloc_counter_thread_allocations()
        for ref in refs { ref.tell(1) }
        try deterministic.runUntilQuiescent()
        stages.firstMessage = Double(malloc_counter_thread_allocations() - start) / Double(count)
        start = malloc_counter_thread_allocations()
        for ref in refs { ref.stop() }
        try deterministic.runUntilQuiescent()
        stages.stop = Double(malloc_counter_thread_allocations() - start) / Double(count)
        #expect(system.metrics.liveActors == 0)
        #expect(system.metrics.delivered == 2 * count)
        system.shutdown()
        return stages
    }

    /// Debug builds' DeterministicScheduler allocates one entry per schedule of an idle
    /// unit (each stage below schedules each actor once); release builds' real scheduler
    /// none (scripts/instructions.sh spawn counts the allocations per actor in all: the
    /// caller's closure context, the cell, which stores its mailbox queue, and the ring).
    @Test("allocations per closure actor: spawn, first message, stop")
    func allocationsPerStage() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan/ASan builds: the sanitizer owns malloc
        let unnamed = try Self.measure(count: 1_000)
        // The cell, which stores its mailbox queue (MPSCQueue, "One object") and its closure
        // (ClosureCellBehavior), and its own turn's closure context with the extras that
        // keep it. That context holds the behaviour's metadata and conformance:
        // unspecialised debug code allocates it per spawn; a release build specialises the
        // spawn, the turn captures nothing and the header keeps its code (ActorCellBase, A3).
        // Not the first turn's schedule: a closure actor gets none (closureActorBornRunning).
        // Not the name: `$<id>` is formatted when read.
        #expect(unnamed.spawn <= 3, "\(unnamed)")
        // The ring, the schedule.
        #expect(unnamed.firstMessage <= 2.01, "\(unnamed)")
        // The schedule only: the stop travels in the system-queue word, with no system
        // queue, ring or extras of its own.
        #expect(unnamed.stop <= 1.01, "\(unnamed)")
        let named = try Self.measure(count: 1_000, named: true)
        // As above, plus the SpawnInfo holding the name, plus the options' side object
        // holding it (`SpawnOptions(name:)` runs inside the measured loop).
        #expect(named.spawn <= 5, "\(named)")
        #expect(named.stop <= 1.01, "\(named)")
    }

    @Test("a child given only its parent keeps the parent without a SpawnInfo")
    func childKeepsParentWithoutSideObject() throws {
        let deterministic = DeterministicScheduler(seed: 25)
        let system = makeDeterministicSystem(deterministic)
        let made = Lock<ActorRef<Int>?>(nil)
        let parent = try system.spawn { (_: Int, context: ActorContext<Int>) in
            let child = try context.spawn { (_: Int, _) in }
            made.withLock { $0 = child }
        }
        parent.tell(1)
        try deterministic.runUntilQuiescent()
        let child = try #require(made.withLock { $0 })
        let cell = try #require(child.identity as? ActorCellBase<Int>)
        let parentCell = try #require(parent.identity as? ActorCellBase<Int>)
        // Before: every child allocated a SpawnInfo for its parent (the allocation gate's
        // spawn-by-an-actor count rose from 5 to 6).
        #expect(cell.spawnInfo == nil, "no side object for a child given nothing else")
        #expect(cell.parent === parentCell)
        #expect(cell.supervisor.sharesStorage(with: system.defaultSupervisor))
        system.shutdown()
    }

    @Test("an unnamed actor is called $<id> by every reader, and a named one by its name")
    func lazilyFormattedName() throws {
        let deterministic = DeterministicScheduler(seed: 22)
        let system = makeDeterministicSystem(deterministic)
        let unnamed = try system.spawn { (_: Int, _) in }
        let named = try system.spawn(options: SpawnOptions(name: "kept")) { (_: Int, _) in }
        let cell = try #require(unnamed.identity as? ActorCellBase<Int>)
        // Unspecialised code (a debug build) makes a turn with a context, which the extras
        // keep (ActorCellBase, A3); a specialised one is a word in the header.
        #expect(cell.spawnInfo == nil && (cell.extrasStorage == nil || !cell.unitHeader.keepsOwnTurn),
                "an unnamed top-level actor with defaults has no side object")
        #expect(unnamed.name == "$\(unnamed.id.rawValue)")
        #expect(named.name == "kept")
        unnamed.stop()
        named.stop()
        try deterministic.runUntilQuiescent()
        #expect(cell.termination == Terminated(id: unnamed.id, name: "$\(unnamed.id.rawValue)", reason: .stopped))
        #expect(unnamed.name == "$\(unnamed.id.rawValue)")
        system.shutdown()
    }

    /// Records the Terminated signals it gets for the actor it watches.
    final class Watcher: EventActor {
        let target: ActorRef<Int>
        let seen: Probe<Terminated>
        init(target: ActorRef<Int>, seen: Probe<Terminated>) { self.target = target; self.seen = seen }
        func preStart(context: ActorContext<Int>) { context.watch(target) }
        func receive(_ message: Int, context: ActorContext<Int>) {}
        func receiveSignal(_ signal: Signal, context: ActorContext<Int>) {
            if case .terminated(let t) = signal { seen.record(t) }
        }
    }

    @Test("a stop from outside allocates no system queue; watchers are told as before")
    func stopWithoutSystemQueue() throws {
        let deterministic = DeterministicScheduler(seed: 23)
        let system = makeDeterministicSystem(deterministic)
        let target = try system.spawn { (_: Int, _) in }
        let seen = Probe<Terminated>()
        _ = try system.spawn { Watcher(target: target, seen: seen) }
        try deterministic.runUntilQuiescent()  // both started; the watch queued a system queue on target
        let quiet = try system.spawn { (_: Int, _) in }
        try deterministic.runUntilQuiescent()
        let quietCell = try #require(quiet.identity as? ActorCellBase<Int>)
        quiet.stop()
        target.stop()
        try deterministic.runUntilQuiescent()
        #expect(quietCell.isStopped)
        #expect(quietCell.systemQueueStorage.load(ordering: .acquiring) == nil, "the word was taken; no queue made")
        #expect(seen.values == [Terminated(id: target.id, name: target.name, reason: .stopped)])
        #expect(system.metrics.liveActors == 1)
        system.shutdown()
    }

    @Test("a system message sent while a stop word is held queues behind that stop (S3)")
    func stopWordKeepsItsPlace() throws {
        let deterministic = DeterministicScheduler(seed: 24)
        let system = makeDeterministicSystem(deterministic)
        let ref = try system.spawn { (_: Int, _) in }
        try deterministic.runUntilQuiescent()
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        cell.sendSystem(.stop(.immediately, .stopped))  // held in the word
        let word = cell.systemQueueStorage.load(ordering: .acquiring)
        #expect(word.map(AnyActorCell.StopWord.isWord) == true)
        cell.sendSystem(.stop(.immediately, .systemShutDown))  // makes the queue, carrying the first stop
        let queue = try #require(cell.systemQueue)
        #expect(queue.approximateCount == 2)
        try deterministic.runUntilQuiescent()
        #expect(cell.termination?.reason == .stopped, "the first stop was handled first")
        #expect(system.metrics.liveActors == 0)
        system.shutdown()
    }

    /// Records its preStart.
    final class Starter: EventActor {
        let started: Probe<Int>
        init(started: Probe<Int>) { self.started = started }
        func preStart(context: ActorContext<Int>) { started.record(0) }
        func receive(_ message: Int, context: ActorContext<Int>) { started.record(message) }
    }

    @Test("a closure actor is born running: spawning it schedules no turn, its first message runs it in one")
    func closureActorBornRunning() throws {
        let deterministic = DeterministicScheduler(seed: 26)
        let system = makeDeterministicSystem(deterministic)
        let got = Probe<Int>()
        let ref = try system.spawn { (n: Int, _) in got.record(n) }
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        // Before: spawn scheduled a first turn that ran the closure actor's empty preStart
        // (one runnable unit here, and two turns for spawn + one message).
        #expect(deterministic.isQuiescent, "spawning a closure actor schedules nothing")
        #expect(cell.phaseCode == .running && cell.instanceStarted)
        ref.tell(7)
        let firstTurns = try deterministic.runUntilQuiescent()
        ref.tell(8)
        let laterTurns = try deterministic.runUntilQuiescent()
        #expect(firstTurns == laterTurns, "the first message costs no more turns than the next (no start turn)")
        #expect(got.values == [7, 8])
        // A child closure actor likewise; an actor with a preStart still gets its first turn.
        let started = Probe<Int>()
        let parent = try system.spawn { Starter(started: started) }
        #expect(!deterministic.isQuiescent, "an actor with a preStart is scheduled at spawn")
        try deterministic.runUntilQuiescent()
        #expect(started.values == [0])
        let child = Lock<(ActorRef<Int>, Bool)?>(nil)
        let spawner = try system.spawn { (_: Int, context: ActorContext<Int>) in
            let made = try context.spawn { (n: Int, _) in got.record(n) }
            let running = (made.identity as? ActorCellBase<Int>)?.phaseCode == .running
            child.withLock { $0 = (made, running) }
        }
        spawner.tell(0)
        try deterministic.runUntilQuiescent()
        let (childRef, childWasRunning) = try #require(child.withLock { $0 })
        #expect(childWasRunning, "a child closure actor is running as soon as spawn returns")
        childRef.tell(9)
        try deterministic.runUntilQuiescent()
        #expect(got.values == [7, 8, 9])
        // Stopped and watched without ever getting a message: terminates as before.
        let idle = try system.spawn { (_: Int, _) in }
        let seen = Probe<Terminated>()
        _ = try system.spawn { Watcher(target: idle, seen: seen) }
        try deterministic.runUntilQuiescent()
        idle.stop()
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [Terminated(id: idle.id, name: idle.name, reason: .stopped)])
        idle.tell(1)  // after the stop: a dead letter
        try deterministic.runUntilQuiescent()
        #expect(system.deadLetters.count == 1)
        parent.stop()
        let report = system.shutdown()
        #expect(report.isBalanced && report.actorsNotStopped == 0, "\(report)")
        #expect(report.delivered == 4 && report.deadLettered == 1, "\(report)")
    }
}
