// DeadLetterLog: the runtime's log of dead letters, so a storm neither floods the log nor
// leaves a letter unmentioned. In each interval of the scheduler's clock the first
// `burst` letters get a line (recipient, message type, reason; never the value, which
// may be private); the rest are counted and logged as one line at the next interval's
// first letter or at shutdown. Thread-safe: a short lock, lines logged outside it.

import Logging
import MNScheduler

final class DeadLetterLog: Sendable {
    /// Letters logged one by one per interval.
    let burst: Int
    /// The interval in nanoseconds.
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

    /// Logs `letter` at info, or counts it once the burst is spent; first logs an ended
    /// interval's count.
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

    /// Logs the count not yet logged, if any (shutdown).
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
