import MNScheduler

/// What a supervisor does when a child's behaviour throws.
///
/// The failing child's *parent's* strategy decides (for top-level actors, the system's
/// default). Whatever it decides, the worker thread is never harmed: the error is caught
/// at the message boundary.
///
/// The default (``default``) restarts the child — a fresh instance from its factory, the
/// mailbox and its messages kept, stashed messages re-delivered first — at once, at most
/// 10 times within 60 seconds; one more failure in that window stops it. The message that
/// was being processed when the behaviour threw counts as delivered and is not retried.
///
/// A restart cancels the actor's timers (``ActorContext/timers``). To restart after a
/// growing delay instead of at once, use ``restartWithBackoff(minimum:maximum:randomFactor:resetAfter:maxRestarts:within:)``;
/// to keep the instance and its state, ``resume``.
public struct SupervisorStrategy: Sendable {
    /// A supervisor's decision about one failure.
    public enum Directive: Sendable, Equatable {
        /// Keep the current instance and its state; go on with the next message. The failing
        /// message counts as delivered (it was handled, and threw); the error is logged at
        /// debug level with the actor's metadata.
        case resume
        /// Replace the instance with a fresh one from the factory; keep the mailbox. With
        /// ``SupervisorStrategy/backoff`` set, the fresh instance starts after the back-off
        /// delay, and messages wait in the mailbox until then.
        case restart
        /// Stop the child (its pending messages go to dead letters).
        case stop
        /// Stop the child and fail the parent with the same error, so the grandparent's
        /// strategy decides about the parent. A top-level actor's escalation stops it.
        case escalate
    }

    /// The fields live in one shared, copy-on-write box, so a strategy is one pointer wide
    /// and the many cells that hold the same strategy share it.
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
    /// How long a ``Directive/restart`` waits before the fresh instance starts; nil (the
    /// default): no wait. See ``restartWithBackoff(minimum:maximum:randomFactor:resetAfter:maxRestarts:within:)``.
    public var backoff: Backoff? { storage.backoff }

    /// True when both values share one box, so they are the same strategy. A cell stores
    /// its strategy only when it is not its system's default (AnyActorCell.SpawnInfo).
    func sharesStorage(with other: SupervisorStrategy) -> Bool { storage === other.storage }

    /// A strategy that asks `decide` about each failure and allows `maxRestarts` restarts
    /// within `window` (of the scheduler's clock) before the next failure stops the child.
    /// Restarts happen at once; see
    /// ``restartWithBackoff(minimum:maximum:randomFactor:resetAfter:maxRestarts:within:)``
    /// for delayed ones.
    public init(maxRestarts: Int = 10, within window: Duration = .seconds(60),
                decide: @escaping @Sendable (any Error) -> Directive) {
        storage = Storage(maxRestarts: maxRestarts, window: window, decide: decide)
    }

    /// Restart on every error, at once, at most 10 times within 60 seconds (of the
    /// scheduler's clock: virtual time on a deterministic scheduler); the next failure in
    /// that window stops the actor. Restarts are not delayed: an actor that fails on every
    /// message uses its 10 restarts on the next 10 messages. For a delay between restarts
    /// use ``restartWithBackoff(minimum:maximum:randomFactor:resetAfter:maxRestarts:within:)``.
    public static let `default` = SupervisorStrategy { _ in .restart }
    /// Restart on every error, at most `maxRestarts` times within `window`, then stop.
    public static func restart(maxRestarts: Int, within window: Duration) -> SupervisorStrategy {
        SupervisorStrategy(maxRestarts: maxRestarts, within: window) { _ in .restart }
    }
    /// Stop on every error.
    public static let stop = SupervisorStrategy { _ in .stop }
    /// Keep going on every error: the instance and its state are kept, the failing message
    /// counts as delivered, and the next message is handled (see ``Directive/resume``).
    public static let resume = SupervisorStrategy { _ in .resume }
    /// Escalate every error to the parent.
    public static let escalate = SupervisorStrategy { _ in .escalate }

    /// Restart on every error after an exponentially growing delay (Akka's
    /// `restartWithBackoff`): the n-th restart in a row (n = 0, 1, …) waits
    /// `min(maximum, minimum × 2ⁿ) × (1 + r × randomFactor)`, r uniform in `0..<1`.
    ///
    /// - While the delay runs, the failed instance has stopped (postStop ran, its children
    ///   stopped, its timers cancelled) and no message is handled: messages that arrive
    ///   stay queued in order and go to the fresh instance after its preStart. A bounded
    ///   mailbox keeps its bound meanwhile. Stopping the actor during the delay stops it at
    ///   once (its queued messages become dead letters).
    /// - The count n returns to 0 once the actor has run for `resetAfter` (default:
    ///   `maximum`) since its last restart without failing.
    /// - `r` comes from a generator per actor: seeded from a deterministic scheduler's seed
    ///   (and how far it has run), so a test replays the same delays; random otherwise.
    /// - The delays are on the scheduler's clock (virtual time on a deterministic scheduler).
    /// - `maxRestarts` within `window` still bounds the restarts (default: no bound); the
    ///   next failure past it stops the actor.
    /// - Throws: ``ConfigurationError`` when `minimum` is not positive, `maximum` is less
    ///   than `minimum` or longer than ``Backoff/longestDelay``, `randomFactor` is not in
    ///   `0...1`, `resetAfter` is negative, or `maxRestarts` is negative.
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

    /// The delays of a back-off restart (see
    /// ``SupervisorStrategy/restartWithBackoff(minimum:maximum:randomFactor:resetAfter:maxRestarts:within:)``).
    public struct Backoff: Sendable, Equatable {
        /// The first restart's delay (before the random factor).
        public let minimum: Duration
        /// The longest delay before the random factor: doubling stops here.
        public let maximum: Duration
        /// Up to this fraction of the delay is added at random (`0...1`).
        public let randomFactor: Double
        /// A run this long since the last restart without a failure resets the doubling.
        public let resetAfter: Duration

        /// The longest `maximum` accepted: 100 days, beyond which a delay is a mistake
        /// rather than a plan (and would outlive any test's virtual clock arithmetic).
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

        /// The delay of restart number `attempt` (0 for the first in a row), with `unit` the
        /// random draw in `0..<1`, in nanoseconds.
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

    /// A strategy that cannot work as asked, named with the offending value.
    public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The back-off minimum must be more than zero.
        case nonPositiveMinimum(Duration)
        /// The back-off maximum is less than its minimum.
        case maximumBelowMinimum(minimum: Duration, maximum: Duration)
        /// The back-off maximum is longer than ``Backoff/longestDelay``.
        case maximumTooLong(Duration)
        /// The random factor must be in `0...1` (and a number).
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

/// Counts restarts within a sliding window (owned by one actor cell; not thread-safe).
struct RestartBudget {
    private var times: [UInt64] = []

    /// Records a restart now; false when it would exceed `strategy.maxRestarts` in the window.
    /// Called inside the failing cell's turn, so "now" is the turn's clock: virtual on a
    /// DeterministicScheduler, monotonic otherwise (SchedulerClock.currentTurn).
    mutating func allowRestart(_ strategy: SupervisorStrategy) -> Bool {
        let now = SchedulerClock.currentTurn.nanoseconds()
        let window = strategy.window.saturatingNanoseconds  // any Duration: no overflow trap
        times.removeAll { now &- $0 > window }
        guard times.count < strategy.maxRestarts else { return false }
        times.append(now)
        return true
    }
}
