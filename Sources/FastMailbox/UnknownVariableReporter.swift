// UnknownVariableReporter: warns once per process about `MN_` environment variables the
// runtime does not read, each with the closest known name, so a misspelling is not
// silently ignored. Tests make their own reporter.

import Logging
import MNScheduler
import Synchronization

final class UnknownVariableReporter: Sendable {
    /// The process's reporter, which ActorSystem's initialisers ask.
    static let process = UnknownVariableReporter()

    private let reported = Atomic<Bool>(false)

    /// On the first call only, logs a warning per unknown `MN_` variable; returns the count.
    @discardableResult
    func reportOnce(environment: @autoclosure () -> [String: String], to logger: Logger) -> Int {
        guard !reported.exchange(true, ordering: .relaxed) else { return 0 }
        let unknown = UnknownConfigurationVariable.find(in: environment())
        for variable in unknown {
            var metadata: Logger.Metadata = ["config/variable": "\(variable.name)"]
            if let closest = variable.closest { metadata["config/closest"] = "\(closest.name)" }
            logger.warning("\(variable)", metadata: metadata)
        }
        return unknown.count
    }
}
