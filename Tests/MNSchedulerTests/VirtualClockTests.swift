import XCTest
@testable import MNScheduler

final class VirtualClockTests: XCTestCase {
    /// A log the timers' actions append to (they are @Sendable).
    final class Log: @unchecked Sendable {
        private let lock = Lock<[String]>([])
        func append(_ entry: String) { lock.withLock { $0.append(entry) } }
        var entries: [String] { lock.withLock { $0 } }
    }

    func testStartsAtZeroAndMovesOnlyWhenAdvanced() {
        let clock = VirtualClock()
        XCTAssertEqual(clock.nanoseconds, 0)
        XCTAssertEqual(clock.advance(by: 1_500), 0)
        XCTAssertEqual(clock.nanoseconds, 1_500)
        XCTAssertEqual(clock.nanoseconds, 1_500)
    }

    /// V2: due timers fire in (deadline, registration) order, each seeing its own deadline;
    /// later ones stay pending.
    func testFiresDueTimersInDeadlineOrderAtTheirDeadline() {
        let clock = VirtualClock()
        let log = Log()
        clock.addTimer(at: 300) { log.append("c@\(clock.nanoseconds)") }
        clock.addTimer(at: 100) { log.append("a@\(clock.nanoseconds)") }
        clock.addTimer(at: 100) { log.append("b@\(clock.nanoseconds)") }
        clock.addTimer(at: 900) { log.append("late") }
        XCTAssertEqual(clock.advance(by: 500), 3)
        XCTAssertEqual(log.entries, ["a@100", "b@100", "c@300"])
        XCTAssertEqual(clock.nanoseconds, 500)
        XCTAssertEqual(clock.pendingTimers, 1)
    }

    /// V2: a timer added by an action, due within the advance, fires in the same advance.
    func testTimerAddedByAnActionFiresInTheSameAdvance() {
        let clock = VirtualClock()
        let log = Log()
        clock.addTimer(at: 10) {
            log.append("first")
            clock.addTimer(at: 20) { log.append("second@\(clock.nanoseconds)") }
        }
        clock.advance(by: 50)
        XCTAssertEqual(log.entries, ["first", "second@20"])
    }

    /// A timer in the past fires at the next advance, even one of zero.
    func testPastDeadlineFiresAtNextAdvanceAndHugeAdvanceSaturates() {
        let clock = VirtualClock()
        clock.advance(by: 100)
        let log = Log()
        clock.addTimer(at: 50) { log.append("past") }
        XCTAssertEqual(clock.advance(by: 0), 1)
        XCTAssertEqual(log.entries, ["past"])
        clock.advance(by: .max)
        XCTAssertEqual(clock.nanoseconds, .max)
    }
}
