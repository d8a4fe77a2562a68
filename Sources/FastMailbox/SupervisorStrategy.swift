import MNScheduler

/// What a supervisor does when a child's behaviour throws.
///
/// The failing child's parent's strategy decides (at top level, the system's default).
/// The error is caught at the message boundary; the message that threw counts as
/// delivered and is not retried. A restart makes a fresh instance from the factory,
/// keeps the mailbox, re-delivers stashed messages first and cancels the actor's timers.
public struct SupervisorStrategy: Sendable {
    /// A supervisor's decision about one failure.
    public enum Directive: Sendable, Equatable {
        /// Keep the instance and its state; the error is logged at debug level.
        case resume
        /// Replace the instance with a fresh one; keep the mailbox (see ``SupervisorStrategy/backoff``).
        case restart
        /// Stop the child; its pending messages become dead letters.
        case stop
        /// Stop the child and fail its parent with the error (a top-level actor stops).
        case escalate
    }

    /// One shared box: a strategy is one pointer wide.
    final class Storage: Sendable {
        let maxRestarts: Int
        let window: Duration
        let decide: @Sendable (any Error) -> Directive
        let backoff: Backoff?
        init(maxRestarts: Int, window: Duration, backoff: Backoff? = nil,
             decide: @escaping @Sendable (any Error) -> Directive) {
            self.maxRestarts = maxRestarts
            self.window = window
            self.backoff = backoff
            self.decide = decide
        }
    }
    private var storage: Storage

    /// Restarts allowed within `window` before the next failure stops the child.
    public var maxRestarts: Int {
        get { storage.maxRestarts }
        set { storage = Storage(maxRestarts: newValue, window: storage.window, backoff: storage.backoff, decide: storage.decide) }
    }
    /// The sliding window for `maxRestarts`.
    public var window: Duration {
        get { storage.window }
        set { storage = Storage(maxRestarts: storage.maxRestarts, window: newValue, backoff: storage.backoff, decide: storage.decide) }
    }
    /// Maps an error to a directive.
    public var decide: @Sendable (any Error) -> Directive {
        get { storage.decide }
        set { storage = Storage(maxRestarts: storage.maxRestarts, window: storage.window, backoff: storage.backoff, decide: newValue) }
    }
    /// How long a ``Directive/restart`` waits; nil (the default): no wait.
    public var backoff: Backoff? { storage.backoff }

    /// Both share one box (a cell stores only a non-default strategy).
    func sharesStorage(with other: SupervisorStrategy) -> Bool { storage === other.storage }

    /// Asks `decide` about each failure; allows `maxRestarts` restarts within `window` of
    /// the scheduler's clock, then the next failure stops the child.
    public init(maxRestarts: Int = 10, within window: Duration = .seconds(60),
                decide: @escaping @Sendable (any Error) -> Directive) {
        storage = Storage(maxRestarts: maxRestarts, window: window, decide: decide)
    }

    /// Restart at once on every error, at most 10 times within 60 seconds; the next
    /// failure in that window stops the actor.
    public static let `default` = SupervisorStrategy { _ in .restart }
    /// Restart on every error, at most `maxRestarts` times within `window`, then stop.
    public static func restart(maxRestarts: Int, within window: Duration) -> SupervisorStrategy {
        SupervisorStrategy(maxRestarts: maxRestarts, within: window) { _ in .restart }
    }
    /// Stop on every error.
    public static let stop = SupervisorStrategy { _ in .stop }
    /// Keep going on every error (``Directive/resume``).
    public static let resume = SupervisorStrategy { _ in .resume }
    /// Escalate every error to the parent.
    public static let escalate = SupervisorStrategy { _ in .escalate }

    /// Restart on every error after an exponentially growing delay: the n-th restart in a
    /// row waits `min(maximum, minimum × 2ⁿ) × (1 + r × randomFactor)`, r uniform in
    /// `0..<1` (<doc:TimersAndAsyncResults>, "Back-off supervision").
    ///
    /// - During the delay the failed instance has stopped and messages stay queued, in
    ///   order, for the fresh instance. Stopping the actor then stops it at once.
    /// - n returns to 0 after a run of `resetAfter` (default: `maximum`) without failure.
    /// - `r` comes from a deterministic scheduler's seed, so a test replays the delays.
    /// - `maxRestarts` within `window` still bounds the restarts (default: no bound).
    /// - Throws: ``ConfigurationError`` naming the bad value.
    public static func restartWithBackoff(
        minimum: Duration, maximum: Duration, randomFactor: Double,
        resetAfter: Duration? = nil, maxRestarts: Int = .max, within window: Duration = .seconds(60)
    ) throws(ConfigurationError) -> SupervisorStrategy {
        let backoff = try Backoff(minimum: minimum, maximum: maximum, randomFactor: randomFactor,
                                  resetAfter: resetAfter ?? maximum)
        guard maxRestarts >= 0 else { throw .negativeMaxRestarts(maxRestarts) }
        var strategy = SupervisorStrategy(maxRestarts: maxRestarts, within: window) { _ in .restart }
        strategy.storage = Storage(maxRestarts: maxRestarts, window: window, backoff: backoff, decide: strategy.decide)
        return strategy
    }

    /// The delays of a back-off restart.
    public struct Backoff: Sendable, Equatable {
        /// The first restart's delay (before the random factor).
        public let minimum: Duration
        /// The longest delay before the random factor: doubling stops here.
        public let maximum: Duration
        /// Up to this fraction of the delay is added at random.
        public let randomFactor: Double
        /// A run this long without failure resets the doubling.
        public let resetAfter: Duration

    /// The longest `maximum` accepted: 100 days; a longer delay is a mistake.
        public static let longestDelay: Duration = .seconds(100 * 86_400)

        init(minimum: Duration, maximum: Duration, randomFactor: Double, resetAfter: Duration) throws(ConfigurationError) {
            guard minimum > .zero else { throw .nonPositiveMinimum(minimum) }
            guard maximum >= minimum else { throw .maximumBelowMinimum(minimum: minimum, maximum: maximum) }
            guard maximum <= Self.longestDelay else { throw .maximumTooLong(maximum) }
            guard randomFactor >= 0, randomFactor <= 1 else { throw .randomFactorOutOfRange(randomFactor) }
            guard resetAfter >= .zero else { throw .negativeResetAfter(resetAfter) }
            self.minimum = minimum
            self.maximum = maximum
            self.randomFactor = randomFactor
            self.resetAfter = resetAfter
        }

    /// Restart `attempt`'s delay (0-based; `unit` in `0..<1`), in nanoseconds.
        func delayNanoseconds(attempt: Int, unit: Double) -> UInt64 {
            let minimum = Double(self.minimum.saturatingNanoseconds)
            let maximum = Double(self.maximum.saturatingNanoseconds)
            let base = Swift.min(maximum, minimum * pow2(Swift.min(attempt, 64)))
            let delay = base * (1 + unit * randomFactor)
            return delay >= 1.8e19 ? .max : UInt64(delay)  // bounded by longestDelay × 2 anyway
        }

        private func pow2(_ exponent: Int) -> Double {
            var value = 1.0
            for _ in 0..<exponent { value *= 2 }
            return value
        }
    }

    /// A strategy that cannot work as asked.
    public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The back-off minimum must be more than zero.
        case nonPositiveMinimum(Duration)
        /// The back-off maximum is less than its minimum.
        case maximumBelowMinimum(minimum: Duration, maximum: Duration)
        /// The back-off maximum is longer than ``Backoff/longestDelay``.
        case maximumTooLong(Duration)
        /// The random factor must be in `0...1`.
        case randomFactorOutOfRange(Double)
        /// The reset interval must not be negative.
        case negativeResetAfter(Duration)
        /// The restart bound must not be negative.
        case negativeMaxRestarts(Int)

        public var description: String {
            switch self {
            case .nonPositiveMinimum(let minimum):
                "back-off minimum must be more than zero, got \(minimum)"
            case .maximumBelowMinimum(let minimum, let maximum):
                "back-off maximum \(maximum) is less than its minimum \(minimum)"
            case .maximumTooLong(let maximum):
                "back-off maximum \(maximum) is longer than the longest accepted, \(Backoff.longestDelay)"
            case .randomFactorOutOfRange(let factor):
                "back-off random factor must be in 0...1, got \(factor)"
            case .negativeResetAfter(let resetAfter):
                "back-off resetAfter must not be negative, got \(resetAfter)"
            case .negativeMaxRestarts(let count):
                "maxRestarts must not be negative, got \(count)"
            }
        }
    }
}

/// Restarts within a sliding window (one cell's, turn-confined).
struct RestartBudget {
    private var times: [UInt64] = []

    /// Records a restart now; false past `strategy.maxRestarts` in the window.
    mutating func allowRestart(_ strategy: SupervisorStrategy) -> Bool {
        let now = SchedulerClock.currentTurn.nanoseconds()
        let window = strategy.window.saturatingNanoseconds  // any Duration: no overflow trap
        times.removeAll { now &- $0 > window }
        guard times.count < strategy.maxRestarts else { return false }
        times.append(now)
        return true
    }
}
