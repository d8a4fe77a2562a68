// SchedulerError — why the scheduler refused a request.

/// Why `Scheduler.schedule(_:)` (or an executor built on it) refused work.
public enum SchedulerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `shutdown()` has begun: the scheduler accepts no new work.
    case shutDown

    public var description: String {
        switch self {
        case .shutDown: return "the MNScheduler has been shut down and accepts no new work"
        }
    }
}
