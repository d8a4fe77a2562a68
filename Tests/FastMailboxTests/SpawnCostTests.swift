// Spawn cost: heap allocations per actor at each stage of its life (spawn, first turn with
// one message, stop), counted on the test's thread with MallocCounter: every turn runs
// there (DeterministicScheduler). Counts, never time.

import MallocCounter
import MNScheduler
import Synchronization
import Testing
@testable import FastMailbox

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
        let warm = try (0..<count).map { i in try system.spawn(name: named ? "warm\(i)" : nil) { (_: Int, _) in } }
        for ref in warm { ref.tell(1) }
        try deterministic.runUntilQuiescent()
        for ref in warm { ref.stop() }
        try deterministic.runUntilQuiescent()

        var stages = StageAllocations()
        let names = (0..<count).map { "actor\($0)" }
        var start = malloc_counter_thread_allocations()
        for i in 0..<count { refs.append(try system.spawn(name: named ? names[i] : nil) { (_: Int, _) in }) }
        stages.spawn = Double(malloc_counter_thread_allocations() - start) / Double(count)
        start = malloc_counter_thread_allocations()
        for ref in refs { ref.tell(1) }
        try deterministic.runUntilQuiescent()
        stages.firstMessage = Double(malloc_counter_thread_allocations() - start) / Double(count)
        start = malloc_counter_thread_allocations()
        for ref in refs { ref.stop() }
        try deterministic.runUntilQuiescent()
        stages.stop = Double(malloc_counter_thread_allocations() - start) / Double(count)
        #expect(system.statistics.liveActors == 0)
        #expect(system.statistics.delivered == 2 * count)
        system.shutdown()
        return stages
    }

    @Test("allocations per closure actor: spawn, first message, stop")
    func allocationsPerStage() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan/ASan builds: the sanitizer owns malloc
        let unnamed = try Self.measure(count: 1_000)
        let named = try Self.measure(count: 1_000, named: true)
        print("unnamed: \(unnamed); named: \(named)")
    }
}
