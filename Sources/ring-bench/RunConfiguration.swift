import MNScheduler

/// The scheduler configuration a run used and the `MN_` environment it ran with, as every
/// results file records them: a figure read without them can mislead (a run with a small
/// MN_THROUGHPUT reads as a regression).
struct RunConfiguration: Codable, Sendable {
    /// One scheduler setting: its effective value and where it came from.
    struct Entry: Codable, Sendable {
        var setting: String
        var variable: String
        var value: String
        /// default, environment, code, or `--workers` for a worker count given on the command line.
        var source: String
    }

    /// Every setting of SchedulerConfiguration, in table order.
    var scheduler: [Entry]
    /// Every `MN_`-prefixed variable of the environment, known or not.
    var environment: [String: String]

    /// The configuration a cell resolves when it sets only its worker count (what every
    /// workload does, but blocking, whose rows set the blocking threshold in code).
    /// `workers`: the counts the run sweeps; `fromCommandLine`: whether `--workers` gave them.
    init(resolved: ResolvedSchedulerConfiguration, environment: [String: String], workers: [Int], fromCommandLine: Bool) {
        scheduler = SchedulerConfiguration.Setting.allCases.map { setting in
            setting == .workers
                ? Entry(setting: setting.rawValue, variable: setting.environmentVariable,
                        value: workers.map(String.init).joined(separator: ","),
                        source: fromCommandLine ? "--workers" : resolved.source(of: .workers).rawValue)
                : Entry(setting: setting.rawValue, variable: setting.environmentVariable,
                        value: resolved.value(of: setting), source: resolved.source(of: setting).rawValue)
        }
        self.environment = environment
    }

    /// The `MN_` environment as `NAME=value` pairs sorted by name, or "none".
    static func environmentText(_ environment: [String: String]) -> String {
        environment.isEmpty ? "none" : environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// This run's `MN_` environment as text (see `environmentText(_:)`).
    var environmentText: String { RunConfiguration.environmentText(environment) }

    /// Two Markdown lines: the settings with their sources, then the `MN_` environment.
    var markdown: String {
        let settings = scheduler.map { "\($0.setting) \($0.value) (\($0.source))" }.joined(separator: ", ")
        return "Scheduler: \(settings).\nMN_ environment: \(environmentText).\n"
    }
}
