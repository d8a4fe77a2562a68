import Testing
@testable import MNScheduler
import TestSupport
import FastMailboxTestKit

@Suite struct SchedulerClockTests {
    @Test("a real scheduler reads the monotonic clock")
    func realSchedulerIsMonotonic() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        #expect(!scheduler.isDeterministic)
        #expect(scheduler.clock.virtual == nil)
        let before = monotonicNanoseconds()
        let read = scheduler.clock.nanoseconds()
        #expect(read >= before)
        #expect(read <= monotonicNanoseconds())
    }

    @Test("a deterministic scheduler reads its virtual clock; deadlines saturate")
    func deterministicSchedulerIsVirtual() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        #expect(deterministic.scheduler.isDeterministic)
        #expect(deterministic.scheduler.clock.nanoseconds() == 0)
        try deterministic.advanceTime(by: .milliseconds(250))
        #expect(deterministic.scheduler.clock.nanoseconds() == 250_000_000)
        #expect(deterministic.now == .milliseconds(250))
        #expect(deterministic.scheduler.clock.deadline(after: .seconds(1)) == 1_250_000_000)
        #expect(deterministic.scheduler.clock.deadline(after: .seconds(Int64.max)) == .max)
    }

    @Test("K2: inside a drive, currentTurn is the driven scheduler's clock; outside, the monotonic one")
    func currentTurnIsTheDrivenClock() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        try deterministic.advanceTime(by: .seconds(3))
        let seen = Lock<UInt64?>(nil)
        let unit = ClosureUnit { _, _ in
            seen.withLock { $0 = SchedulerClock.currentTurn.nanoseconds() }
            return .idle
        }
        deterministic.scheduler.schedule(unit)
        try deterministic.runUntilQuiescent()
        #expect(seen.withLock { $0 } == 3_000_000_000)
        #expect(SchedulerClock.currentTurn.virtual == nil)
    }
}
