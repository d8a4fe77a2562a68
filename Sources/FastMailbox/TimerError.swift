/// Why a timer could not be started.
public enum TimerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The delay is negative or longer than ``ActorTimers/longestDuration``.
    case invalidDelay(Duration)
    /// The interval of a periodic timer is not positive or longer than
    /// ``ActorTimers/longestDuration``.
    case invalidInterval(Duration)
    /// The context was used outside its actor's turn (see ``ActorContext``).
    case contextUsedOutsideTurn

    public var description: String {
        switch self {
        case .invalidDelay(let delay):
            "timer delay must be in 0...\(longestTimerDuration), got \(delay)"
        case .invalidInterval(let interval):
            "periodic timer interval must be more than zero and at most \(longestTimerDuration), got \(interval)"
        case .contextUsedOutsideTurn:
            "timers used outside the actor's turn: use them only while handling a message or in a hook"
        }
    }
}
