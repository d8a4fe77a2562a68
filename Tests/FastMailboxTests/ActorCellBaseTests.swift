// How a cell keeps its own turn (ActorCellBase.swift, A3): in its header when the turn
// captures nothing, else in its extras.

@testable import FastMailbox
@testable import MNScheduler
import Testing
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Actor cell base") struct ActorCellBaseTests {
    typealias Cell = ActorCellBase<Int>

    @Test("an actor spawned from concrete code has its own turn: in its header where the spawn was specialised")
    func concreteSpawnKeepsTurn() throws {
        let deterministic = DeterministicScheduler(seed: 31)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        let cell = try #require(ref.identity as? Cell)
        #expect(cell.hasOwnTurn)
        let keeps = cell.unitHeader.keepsOwnTurn
        #if DEBUG
        // Unoptimised, the spawn is not specialised: its turn captures the metadata.
        #expect(!keeps)
        #else
        #expect(keeps, "a specialised spawn's turn captures nothing")
        #endif
        for i in 0..<3 { ref.tell(i) }
        try deterministic.runUntilQuiescent()
        #expect(probe.values == [0, 1, 2])
    }

    @Test("an actor spawned from unspecialised code keeps its turn in the extras and runs it")
    func unspecialisedPassRuns() throws {
        let deterministic = DeterministicScheduler(seed: 32)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let probe = Probe<Int>()
        let ref = try spawnGenerically(in: system, probe: probe)
        let cell = try #require(ref.identity as? Cell)
        // The spawn is generic over the message: its turn captures the metadata.
        let keeps = cell.unitHeader.keepsOwnTurn
        #expect(!keeps)
        #expect(cell.hasOwnTurn)
        for i in 0..<5 { ref.tell(i) }
        try deterministic.runUntilQuiescent()
        #expect(probe.values == [0, 1, 2, 3, 4])
        #expect(cell.deliveredCount == 5)
    }

    /// Generic over the message and never optimised, so the spawn inside stays
    /// unspecialised in any build.
    @_optimize(none)
    private func spawnGenerically<M: Sendable & BinaryInteger>(in system: ActorSystem, probe: Probe<M>) throws -> ActorRef<M> {
        try system.spawn { (m: M, _) in probe.record(m) }
    }
}
