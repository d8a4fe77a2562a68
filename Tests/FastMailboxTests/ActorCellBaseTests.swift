// How a cell keeps its mailbox pass (ActorCellBase.swift, A3): a closure that captures
// nothing is kept as its code alone and rebuilt from it; one with a context is not.

@testable import FastMailbox
@testable import MNScheduler
import Testing
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Actor cell base") struct ActorCellBaseTests {
    typealias Cell = ActorCellBase<Int>

    final class Counter: @unchecked Sendable { var calls = 0 }

    @Test("a pass that captures nothing is kept as one word, and rebuilt from it calls the same code")
    func passKeptAsCode() throws {
        let deterministic = DeterministicScheduler(seed: 31)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let ref = try system.spawn { (_: Int, _) in }
        let cell = try #require(ref.identity as? Cell)
        // Non-generic and capturing nothing: no context, even unoptimised.
        let pass: Cell.MailboxPass = { _, max, _ in max == 7 ? .more : .idle }
        let code = try #require(Cell.code(of: Cell.PassValue(pass: pass)), "a closure with no context keeps its code")
        let rebuilt = Cell.pass(from: code)
        #expect(rebuilt(cell, 7, .never) == .more)
        #expect(rebuilt(cell, 3, .never) == .idle)
    }

    @Test("a pass with a context is not kept as code")
    func passWithContextNotKept() throws {
        let counter = Counter()
        let pass: Cell.MailboxPass = { _, _, _ in counter.calls += 1; return .idle }
        #expect(Cell.code(of: Cell.PassValue(pass: pass)) == nil)
    }

    @Test("an actor spawned from unspecialised code keeps its pass in the extras and runs it")
    func unspecialisedPassRuns() throws {
        let deterministic = DeterministicScheduler(seed: 32)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let probe = Probe<Int>()
        let ref = try spawnGenerically(in: system, probe: probe)
        let cell = try #require(ref.identity as? Cell)
        // The spawn is generic over the message: its pass captures the metadata.
        #expect(cell.passCode == nil)
        #expect(cell.hasMailboxPass)
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
