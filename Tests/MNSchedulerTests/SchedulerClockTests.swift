import XCTest
@testable import MNScheduler

final class SchedulerClockTests: XCTestCase {
    func testRealSchedulerReadsTheMonotonicClock() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        XCTAssertFalse(scheduler.isDeterministic)
        XCTAssertNil(scheduler.clock.virtual)
        let before = monotonicNanoseconds()
        let read = scheduler.clock.nanoseconds()
        XCTAssertGreaterThanOrEqual(read, before)
        XCTAssertLessThanOrEqual(read, monotonicNanoseconds())
    }

    func testDeterministicSchedulerReadsItsVirtualClock() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        XCTAssertTrue(deterministic.scheduler.isDeterministic)
        XCTAssertEqual(deterministic.scheduler.clock.nanoseconds(), 0)
        try deterministic.advanceTime(by: .milliseconds(250))
        XCTAssertEqual(deterministic.scheduler.clock.nanoseconds(), 250_000_000)
        XCTAssertEqual(deterministic.now, .milliseconds(250))
        XCTAssertEqual(deterministic.scheduler.clock.deadline(after: .seconds(1)), 1_250_000_000)
        XCTAssertEqual(deterministic.scheduler.clock.deadline(after: .seconds(Int64.max)), .max)  // saturates
    }

    /// K2: inside a drive (a turn) `currentTurn` is the driven scheduler's virtual clock;
    /// outside, the monotonic clock.
    func testCurrentTurnIsTheDrivenSchedulersClock() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        try deterministic.advanceTime(by: .seconds(3))
        let seen = Lock<UInt64?>(nil)
        let unit = ClosureUnit { _, _ in
            seen.withLock { $0 = SchedulerClock.currentTurn.nanoseconds() }
            return .idle
        }
        deterministic.scheduler.schedule(unit)
        try deterministic.runUntilQuiescent()
        XCTAssertEqual(seen.withLock { $0 }, 3_000_000_000)
        XCTAssertNil(SchedulerClock.currentTurn.virtual)
    }
}
