import MNScheduler

/// What a supervisor does when a child's behaviour throws.
///
/// The failing child's *parent's* strategy decides (for top-level actors, the system's
/// default). Whatever it decides, the worker thread is never harmed: the error is caught
/// at the message boundary.
///
/// The default (``default``) restarts the child — a fresh instance from its factory, the
/// mailbox and its messages kept, stashed messages re-delivered first — at most 10 times
/// within 60 seconds;
/// one more failure in that window stops it. The message that was being processed when
/// the behaviour threw counts as delivered and is not retried.
public struct SupervisorStrategy: Sendable {
    /// A supervisor's decision about one failure.
    public enum Directive: Sendable, Equatable {
        /// Keep the current instance and its state; go on with the next message.
        case resume
        /// Replace the instance with a fresh one from the factory; keep the mailbox.
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
        init(maxRestarts: Int, window: Duration, decide: @escaping @Sendable (any Error) -> Directive) {
            self.maxRestarts = maxRestarts
            self.window = window
            self.decide = decide
        }
    }
    private var storage: Storage

    /// Restarts allowed within `window` before the next failure stops the child.
    public var maxRestarts: Int {
        get { storage.maxRestarts }
        set { storage = Storage(maxRestarts: newValue, window: storage.window, decide: storage.decide) }
    }
    /// The sliding window for `maxRestarts`.
    public var window: Duration {
        get { storage.window }
        set { storage = Storage(maxRestarts: storage.maxRestarts, window: newValue, decide: storage.decide) }
    }
    /// Maps an error to a directive.
    public var decide: @Sendable (any Error) -> Directive {
        get { storage.decide }
        set { storage = Storage(maxRestarts: storage.maxRestarts, window: storage.window, decide: newValue) }
    }

    /// True when both values share one box, so they are the same strategy. A cell stores
    /// its strategy only when it is not its system's default (AnyActorCell.SpawnInfo).
    func sharesStorage(with other: SupervisorStrategy) -> Bool { storage === other.storage }

    /// A strategy that asks `decide` about each failure and allows `maxRestarts` restarts
    /// within `window` before the next failure stops the child.
    public init(maxRestarts: Int = 10, within window: Duration = .seconds(60),
                decide: @escaping @Sendable (any Error) -> Directive) {
        storage = Storage(maxRestarts: maxRestarts, window: window, decide: decide)
    }

    /// Restart on every error, at most 10 times in 60 s, then stop.
    public static let `default` = SupervisorStrategy { _ in .restart }
    /// Restart on every error, at most `maxRestarts` times within `window`, then stop.
    public static func restart(maxRestarts: Int, within window: Duration) -> SupervisorStrategy {
        SupervisorStrategy(maxRestarts: maxRestarts, within: window) { _ in .restart }
    }
    /// Stop on every error.
    public static let stop = SupervisorStrategy { _ in .stop }
    /// Keep going on every error.
    public static let resume = SupervisorStrategy { _ in .resume }
    /// Escalate every error to the parent.
    public static let escalate = SupervisorStrategy { _ in .escalate }
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
