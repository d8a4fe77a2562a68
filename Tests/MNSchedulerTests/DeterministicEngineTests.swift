import Synchronization
import Testing
@testable import MNScheduler
import TestSupport
import FastMailboxTestKit

/// The engine's invariants (DeterministicEngine.swift, D1–D4) checked on the engine itself;
/// DeterministicSchedulerTests checks them through the public API.
@Suite struct DeterministicEngineTests {
    /// Counts turns and re-schedules itself once from inside its first turn (T2).
    final class SelfScheduling: ScheduledUnit, @unchecked Sendable {
        let unitHeader = UnitHeader(kind: SelfScheduling.unitKind)
        static let unitKind = UnitKind.register(SelfScheduling.self)
        let turns = Atomic<Int>(0)
        var scheduler: Scheduler?
        func runTurn(budget: Int) -> TurnOutcome {
            if turns.wrappingAdd(1, ordering: .relaxed).newValue == 1 { scheduler?.schedule(self) }  // running → notified
            return .idle
        }
        func runAfterShutdown() {}
    }

    @Test("D1: a unit is listed once however often it is scheduled; a schedule during its turn runs it once more")
    func listedOnce() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let engine = deterministic.engine
        let unit = SelfScheduling()
        unit.scheduler = deterministic.scheduler
        for _ in 0..<5 { deterministic.scheduler.schedule(unit) }
        #expect(engine.runnableCount == 1)
        #expect(unit.stateSnapshot == UnitHeader.scheduled)
        let previous = try engine.beginDrive()
        let (turns, quiescent) = engine.runTurns(maxTurns: 10)
        engine.endDrive(previous)
        #expect(turns == 2 && quiescent)
        #expect(unit.turns.load(ordering: .relaxed) == 2)
        #expect(unit.stateSnapshot == UnitHeader.idle)
    }

    @Test("runTurns stops at its bound and says whether it quiesced")
    func runTurnsBound() throws {
        let deterministic = DeterministicScheduler(seed: 2)
        let engine = deterministic.engine
        let units = (0..<3).map { _ in ClosureUnit() }
        for unit in units { deterministic.scheduler.schedule(unit) }
        let previous = try engine.beginDrive()
        let first = engine.runTurns(maxTurns: 2)
        let second = engine.runTurns(maxTurns: 2)
        engine.endDrive(previous)
        #expect(first.turns == 2 && !first.quiescent)
        #expect(second.turns == 1 && second.quiescent)
        #expect(engine.turns == 3)
    }

    @Test("D2 and K2: two schedulers' drives may nest; each turn reads its own scheduler's clock, restored after")
    func nestedDrivesOfTwoSchedulers() throws {
        let outer = DeterministicScheduler(seed: 3), inner = DeterministicScheduler(seed: 4)
        try outer.advanceTime(by: .seconds(1))
        try inner.advanceTime(by: .seconds(2))
        let seen = Lock<[UInt64]>([])
        let innerUnit = ClosureUnit { _, _ in
            seen.withLock { $0.append(SchedulerClock.currentTurn.nanoseconds()) }
            return .idle
        }
        let outerUnit = ClosureUnit { _, _ in
            seen.withLock { $0.append(SchedulerClock.currentTurn.nanoseconds()) }
            inner.scheduler.schedule(innerUnit)
            _ = try? inner.runUntilQuiescent()  // another scheduler: allowed inside this turn
            seen.withLock { $0.append(SchedulerClock.currentTurn.nanoseconds()) }
            return .idle
        }
        outer.scheduler.schedule(outerUnit)
        try outer.runUntilQuiescent()
        #expect(seen.withLock { $0 } == [1_000_000_000, 2_000_000_000, 1_000_000_000])
        #expect(innerUnit.runs.load(ordering: .relaxed) == 1)
    }

    /// The actor system's shutdown drain takes and releases the drive guard like any drive,
    /// also on a thread that has never driven (keeping the guard there would run nothing).
    /// A fresh thread, so no earlier drive left state behind.
    @Test("the shutdown drain runs the turns and releases the drive guard, on a thread that never drove")
    func driveForShutdownReleasesTheGuard() throws {
        let deterministic = DeterministicScheduler(seed: 14)
        let units = (0..<3).map { _ in ClosureUnit() }
        for unit in units { deterministic.scheduler.schedule(unit) }
        let results = Lock<[String]>([])
        onThreads(1) { _ in
            let quiesced = deterministic.engine.driveForShutdown(maxTurns: 100)
            let stepped: String
            do throws(DeterministicSchedulerError) { stepped = "\(try deterministic.step())" } catch { stepped = "\(error)" }
            results.withLock { $0 = ["\(quiesced)", stepped] }
        }
        #expect(results.withLock { $0 } == ["true", "false"])
        #expect(units.allSatisfy { $0.runs.load(ordering: .relaxed) == 1 })
    }

    @Test("D4: after shutdown, a schedule runs the after-shutdown hook on the caller, never the turn")
    func scheduleAfterShutdown() {
        let deterministic = DeterministicScheduler(seed: 5)
        deterministic.scheduler.shutdown()
        let unit = ClosureUnit()
        deterministic.scheduler.schedule(unit)
        #expect(unit.abandoned.load(ordering: .relaxed) == 1)
        #expect(unit.runs.load(ordering: .relaxed) == 0)
        #expect(deterministic.engine.runnableCount == 0)
    }
}
