// SchedulerConfigurationError — a configuration value out of range or malformed.

/// A scheduler setting (from the environment or from code) that is malformed or out of
/// range. The description is one line naming the variable, the value and the allowed
/// values, e.g. `bad configuration value MN_WORKERS="0": allowed is an integer in
/// 1...1024 or "auto"`. Uncaught at the top level of a program, it is the line the crash
/// report begins with.
public struct SchedulerConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The environment variable (`MN_WORKERS`) or the code property
    /// (`SchedulerConfiguration.workers`) that held the bad value.
    public let variable: String
    /// The value as given.
    public let value: String
    /// The allowed values, in words.
    public let allowed: String

    /// An error for `variable` holding `value`, which is not among `allowed`.
    public init(variable: String, value: String, allowed: String) {
        self.variable = variable
        self.value = value
        self.allowed = allowed
    }

    public var description: String {
        "bad configuration value \(variable)=\"\(value)\": allowed is \(allowed)"
    }
}
