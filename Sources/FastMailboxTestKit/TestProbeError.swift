/// Why a ``TestProbe`` expectation (or the probe's creation) failed. The description
/// names what was expected and what happened, for a test's failure message.
public enum TestProbeError: Error, CustomStringConvertible {
    /// The probe's system does not run on a ``DeterministicScheduler``: a probe measures
    /// in virtual time, so it needs one.
    case notDeterministic(system: String)
    /// Spawning the probe's actors failed.
    case spawnFailed(any Error)
    /// Nothing that met the expectation arrived within the virtual time given.
    case timedOut(expected: String, within: Duration)
    /// A message arrived that the expectation did not allow: `expected` says what it wanted.
    case unexpectedMessage(String, expected: String)
    /// ``TestProbe/fishForMessage(within:_:)``'s closure failed on a message (the reason
    /// names it).
    case fishingFailed(String)
    /// Driving the deterministic scheduler failed: it did not become quiescent, or it was
    /// already being driven (an expectation called from inside a turn or another thread).
    case scheduler(DeterministicSchedulerError)

    public var description: String {
        switch self {
        case .notDeterministic(let system):
            return "TestProbe: actor system '\(system)' does not run on a DeterministicScheduler; "
                + "create it with ActorSystem(scheduler: DeterministicScheduler(seed:))"
        case .spawnFailed(let error):
            return "TestProbe: could not spawn the probe: \(error)"
        case .timedOut(let expected, let within):
            return "TestProbe: expected \(expected) within \(within) of virtual time; nothing came"
        case .unexpectedMessage(let message, let expected):
            return "TestProbe: expected \(expected), received \(message)"
        case .fishingFailed(let reason):
            return "TestProbe: fishing failed on \(reason)"
        case .scheduler(let error):
            return "TestProbe: \(error)"
        }
    }
}
