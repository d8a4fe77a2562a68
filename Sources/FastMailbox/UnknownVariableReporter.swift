// UnknownVariableReporter — warns, once, about MN_-prefixed environment variables the
// runtime does not read (UnknownConfigurationVariable), each with the closest known name.
//
// A misspelt variable (MN_WORKER=1) would otherwise be ignored without a word. Every
// ActorSystem asks the process's reporter when it is created; only the first asking logs,
// through that system's logger at warning, so a process warns once however many systems
// it makes. Tests make their own reporter and pass the environment.

import Logging
import MNScheduler
import Synchronization

final class UnknownVariableReporter: Sendable {
    /// The process's reporter, which ActorSystem's initialisers ask.
    static let process = UnknownVariableReporter()

    private let reported = Atomic<Bool>(false)

    /// On the first call only, logs one warning per unknown `MN_` variable in
    /// `environment` and returns how many; later calls log nothing and return 0.
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
