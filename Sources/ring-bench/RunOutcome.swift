/// What one timed run of one cell measured, or why its self-check failed.
///
/// A workload returns `.failed` whenever its own check (message counts, per-sender order,
/// checksums) does not hold; the report then prints "CHECK FAILED" instead of a figure.
struct RunOutcome: Sendable, Codable {
    /// Wall-clock seconds of the timed part.
    var seconds: Double
    /// Operations (messages, hops, round trips, actors) in the timed part.
    var operations: Int
    /// Secondary figures: latency percentiles in ns, bytes per actor.
    var extras: [String: Double] = [:]
    /// Why the self-check failed; nil when it passed.
    var failure: String?

    init(seconds: Double, operations: Int, extras: [String: Double] = [:]) {
        self.seconds = seconds
        self.operations = operations
        self.extras = extras
    }

    static func failed(_ why: String) -> RunOutcome {
        var outcome = RunOutcome(seconds: 0, operations: 0)
        outcome.failure = why
        return outcome
    }

    /// The outcome of a timed part that began at `start` (Clock.now()) and ended now, or
    /// a failure when `check` names one.
    static func timed(since start: UInt64, operations: Int, check: String?, extras: [String: Double] = [:]) -> RunOutcome {
        let seconds = Double(Clock.now() - start) / 1e9
        if let check { return .failed(check) }
        var extras = extras
        if let busy = CPUMeter.busy(since: start, seconds: seconds) { extras[CPUMeter.key] = busy }
        return RunOutcome(seconds: seconds, operations: operations, extras: extras)
    }

    /// Operations per second.
    var rate: Double { seconds > 0 ? Double(operations) / seconds : 0 }
}
