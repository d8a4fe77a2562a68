import Testing
@testable import MNScheduler

@Suite struct VirtualClockTests {
    /// A log the timers' actions append to (they are @Sendable).
    final class Log: Sendable {
        private let lock = Lock<[String]>([])
        func append(_ entry: String) { lock.withLock { $0.append(entry) } }
        var entries: [String] { lock.withLock { $0 } }
    }

    @Test("V1: the clock starts at zero and moves only when advanced")
    func startsAtZero() {
        let clock = VirtualClock()
        #expect(clock.nanoseconds == 0)
        #expect(clock.advance(by: 1_500) == 0)
        #expect(clock.nanoseconds == 1_500)
        #expect(clock.nanoseconds == 1_500)
    }

    @Test("V2: due timers fire in (deadline, registration) order, each at its deadline; later ones stay pending")
    func firesInDeadlineOrder() {
        let clock = VirtualClock()
        let log = Log()
        clock.addTimer(at: 300) { log.append("c@\(clock.nanoseconds)") }
        clock.addTimer(at: 100) { log.append("a@\(clock.nanoseconds)") }
        clock.addTimer(at: 100) { log.append("b@\(clock.nanoseconds)") }
        clock.addTimer(at: 900) { log.append("late") }
        #expect(clock.advance(by: 500) == 3)
        #expect(log.entries == ["a@100", "b@100", "c@300"])
        #expect(clock.nanoseconds == 500)
        #expect(clock.pendingTimers == 1)
    }

    @Test("V2: a timer added by an action, due within the advance, fires in the same advance")
    func timerAddedByAnAction() {
        let clock = VirtualClock()
        let log = Log()
        clock.addTimer(at: 10) {
            log.append("first")
            clock.addTimer(at: 20) { log.append("second@\(clock.nanoseconds)") }
        }
        clock.advance(by: 50)
        #expect(log.entries == ["first", "second@20"])
    }

    @Test("a timer in the past fires at the next advance, even of zero; a huge advance saturates")
    func pastDeadlineAndSaturation() {
        let clock = VirtualClock()
        clock.advance(by: 100)
        let log = Log()
        clock.addTimer(at: 50) { log.append("past") }
        #expect(clock.advance(by: 0) == 1)
        #expect(log.entries == ["past"])
        clock.advance(by: .max)
        #expect(clock.nanoseconds == .max)
    }
}
