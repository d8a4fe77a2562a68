// DeadLetterLog — the runtime's log of dead letters: at info, one line per letter up to a
// burst per interval of the scheduler's clock, then one line counting the rest.
//
// A storm of dead letters (a stopped actor still sent to in a loop) must not flood the log
// nor slow the senders much, and no letter may go unmentioned. So the clock is cut into
// intervals: in each, the first `burst` letters get a line of their own (recipient,
// message type, reason — never the message's value, which may hold private data); the
// others are counted, and the count is logged as one line when the first letter of a
// later interval arrives, or at shutdown (`flush`). Letters are still counted and
// published by DeadLetterOffice whatever is logged.
// Clock: the system's scheduler's (SchedulerClock): virtual on a DeterministicScheduler,
// so tests step through intervals exactly. Thread-safety: every method from any thread;
// a short lock guards the interval's counts, and lines are logged outside it.

import Logging
import MNScheduler

final class DeadLetterLog: Sendable {
    /// Letters logged one by one per interval.
    let burst: Int
    /// The interval's length in nanoseconds of the scheduler's clock.
    let intervalNanoseconds: UInt64

    /// The current interval and its counts.
    private struct Interval {
        /// The first clock time past this interval (0 before the first letter).
        var end: UInt64 = 0
        /// Letters logged one by one in it.
        var logged = 0
        /// Letters counted but not logged in it.
        var unlogged = 0
    }
    private let interval = Lock<Interval>(Interval())

    /// Lines per interval before letters are only counted, by default.
    static let defaultBurst = 10
    /// The interval, by default: one second.
    static let defaultIntervalNanoseconds: UInt64 = 1_000_000_000

    init(burst: Int = DeadLetterLog.defaultBurst, intervalNanoseconds: UInt64 = DeadLetterLog.defaultIntervalNanoseconds) {
        self.burst = burst
        self.intervalNanoseconds = intervalNanoseconds
    }

    /// Logs `letter` at info, or counts it when this interval's burst is spent; first logs
    /// the count of an earlier interval that has ended. `now`: the scheduler's clock.
    func record(_ letter: DeadLetter, now: UInt64, logger: Logger) {
        let (earlierUnlogged, logsLetter) = interval.withLock { interval -> (Int, Bool) in
            var earlier = 0
            if now >= interval.end {
                earlier = interval.unlogged
                let end = now.addingReportingOverflow(intervalNanoseconds)
                interval = Interval(end: end.overflow ? .max : end.partialValue)
            }
            guard interval.logged < burst else {
                interval.unlogged += 1
                return (earlier, false)
            }
            interval.logged += 1
            return (earlier, true)
        }
        if earlierUnlogged > 0 { logCount(earlierUnlogged, logger: logger) }
        guard logsLetter else { return }
        logger.info("dead letter", metadata: [
            "actor/id": "\(letter.recipient.rawValue)",
            "actor/name": "\(letter.recipientName)",
            "message/type": "\(type(of: letter.message))",
            "deadletter/reason": "\(letter.reason)",
        ])
    }

    /// Logs the count of letters not yet logged, if any (at shutdown: no later letter will).
    func flush(logger: Logger) {
        let unlogged = interval.withLock { interval in
            defer { interval.unlogged = 0 }
            return interval.unlogged
        }
        if unlogged > 0 { logCount(unlogged, logger: logger) }
    }

    private func logCount(_ count: Int, logger: Logger) {
        logger.info("\(count) more dead letters in the last interval", metadata: [
            "deadletter/count": "\(count)",
            "deadletter/interval": "\(Duration.nanoseconds(Int64(clamping: intervalNanoseconds)))",
        ])
    }
}
