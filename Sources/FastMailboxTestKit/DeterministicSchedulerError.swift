/// Why a ``DeterministicScheduler`` refused to drive, or stopped driving.
///
/// Every case carries the scheduler's seed, so a failing test that prints the error names
/// the seed that replays it.
public enum DeterministicSchedulerError: Error, Equatable, CustomStringConvertible, Sendable {
    /// ``DeterministicScheduler/runUntilQuiescent(maxTurns:)`` ran `turns` turns and
    /// `runnable` units were still waiting: the actors keep making work for each other
    /// (a livelock, or simply more work than the bound).
    case notQuiescent(turns: Int, runnable: Int, seed: UInt64)
    /// The scheduler was already being driven: a call from inside one of its own turns or
    /// timer actions, or from a second thread while another drives it. Nothing was run.
    case alreadyDriving(seed: UInt64)

    public var description: String {
        switch self {
        case .notQuiescent(let turns, let runnable, let seed):
            return "deterministic scheduler (seed \(seed)) not quiescent after \(turns) turns: \(runnable) units still runnable"
        case .alreadyDriving(let seed):
            return "deterministic scheduler (seed \(seed)) is already being driven: "
                + "step, runUntilQuiescent and advanceTime must be called from one thread, outside its turns"
        }
    }
}
