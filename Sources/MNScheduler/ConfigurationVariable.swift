// ConfigurationVariable — the one table of the MN_* environment variables: each one's
// name, allowed values, default and meaning.
//
// Everything else is made from `ConfigurationVariable.all`: resolution and its errors
// (SchedulerConfiguration.resolved), MN_RING_EPOCH's check (RingEpoch.checkEnvironment),
// the warning for an unknown MN_ variable (UnknownConfigurationVariable),
// `ring-bench --print-config` and the DocC Configuration article, whose table a test
// compares with `markdownTable` so the two cannot drift.

/// One environment variable the runtime reads: its name, the values it allows, its
/// default and what it sets.
///
/// A value type; thread-safe to copy and share.
public struct ConfigurationVariable: Sendable, Hashable, CustomStringConvertible {
    /// The values a variable accepts.
    public enum Values: Sendable, Hashable {
        /// A decimal integer in the range, also a power of two when `powerOfTwo`.
        /// `unit` names what it counts when that is not obvious (milliseconds); `zero`
        /// says what 0 means when it means something special; `keyword`, when set, is a
        /// word (case ignored) that asks for the default.
        case integer(ClosedRange<Int>, powerOfTwo: Bool = false, unit: String? = nil, zero: String? = nil,
                     keyword: String? = nil)
        /// `1`, `0`, `true`, `false`, `yes`, `no`, `on` or `off` (case ignored).
        case boolean
        /// One of the words (case ignored).
        case choice([String])
    }

    /// The value used when the variable is not set (and nothing is set in code).
    public enum Default: Sendable, Hashable {
        /// A number.
        case integer(Int)
        /// A truth value.
        case boolean(Bool)
        /// A word of a ``Values/choice(_:)``.
        case word(String)
        /// The CPUs this process may use (``CPUAvailability/usableCPUs``).
        case usableCPUs
    }

    /// The variable's name, e.g. `MN_WORKERS`.
    public let name: String
    /// What it accepts.
    public let values: Values
    /// What applies when it is unset.
    public let defaultValue: Default
    /// What it sets, in one or two sentences.
    public let meaning: String
    /// The ``SchedulerConfiguration`` property that sets the same value in code, nil for
    /// a process-wide variable that has none.
    public let property: String?

    /// An entry; the runtime's own are the static members below, listed in ``all``.
    public init(name: String, values: Values, defaultValue: Default, meaning: String, property: String?) {
        self.name = name
        self.values = values
        self.defaultValue = defaultValue
        self.meaning = meaning
        self.property = property
    }

    public var description: String { name }

    // MARK: the table

    /// ``SchedulerConfiguration/workers``.
    public static let workers = ConfigurationVariable(
        name: "MN_WORKERS", values: .integer(1...1024, keyword: "auto"), defaultValue: .usableCPUs,
        meaning: "Worker threads of each scheduler. The default counts the CPU affinity mask and the cgroup CPU quota.",
        property: "workers")
    /// ``SchedulerConfiguration/throughput``.
    public static let throughput = ConfigurationVariable(
        name: "MN_THROUGHPUT", values: .integer(1...1_000_000), defaultValue: .integer(64),
        meaning: "Most messages an actor handles in one turn before it gives its worker to the next.",
        property: "throughput")
    /// ``SchedulerConfiguration/spinCount``.
    public static let spinCount = ConfigurationVariable(
        name: "MN_SPIN", values: .integer(0...1_000_000), defaultValue: .integer(0),
        meaning: "Search rounds an idle worker spins, back to back, before it sleeps or starts its idle search (MN_IDLE_SEARCH_US). A spinning worker takes a stream from another thread one unit at a time, and holds a core that the producer or threads outside the pool could use; a woken one takes what queued meanwhile in one batch. Raise it for shorter wake-ups on a machine with cores to spare.",
        property: "spinCount")
    /// ``SchedulerConfiguration/idleSearchMicroseconds``.
    public static let idleSearch = ConfigurationVariable(
        name: "MN_IDLE_SEARCH_US",
        values: .integer(0...1_000_000, unit: "microseconds", zero: "means none"), defaultValue: .integer(32),
        meaning: "How long a worker that ran out of work goes on searching before it sleeps, looking once every \(Worker.idleSearchIntervalNanoseconds / 1_000) microseconds, when it ran \(Worker.streamTicks) or more turns since it last woke. A stream of work from another thread is then taken in batches, with no wake-up (a system call in the producer) per batch; a worker that ran one turn, as in a request and its reply, sleeps at once.",
        property: "idleSearchMicroseconds")
    /// ``SchedulerConfiguration/runQueueCapacity``.
    public static let runQueueCapacity = ConfigurationVariable(
        name: "MN_RUNQUEUE_CAPACITY", values: .integer(4...65536, powerOfTwo: true), defaultValue: .integer(4_096),
        meaning: "Slots in each worker's local run queue. The shared injection queue's ring has four times as many. The default holds the actors one turn can make runnable at the default throughput, 64 messages of 64 spawns each, so they stay on the local queue.",
        property: "runQueueCapacity")
    /// ``SchedulerConfiguration/pinWorkers``.
    public static let pinWorkers = ConfigurationVariable(
        name: "MN_PIN", values: .boolean, defaultValue: .boolean(false),
        meaning: "Pins worker i to the i-th CPU of the affinity mask.",
        property: "pinWorkers")
    /// ``SchedulerConfiguration/blockingThresholdMilliseconds``.
    public static let blockingThreshold = ConfigurationVariable(
        name: "MN_BLOCKING_THRESHOLD_MS",
        values: .integer(0...60_000, unit: "milliseconds", zero: "turns detection off"), defaultValue: .integer(10),
        meaning: "How long one turn may run while other work waits before its worker counts as blocked and another thread takes its queued work.",
        property: "blockingThresholdMilliseconds")
    /// ``SchedulerConfiguration/maxBlockingThreads``.
    public static let maxBlockingThreads = ConfigurationVariable(
        name: "MN_MAX_BLOCKING_THREADS", values: .integer(0...4096, zero: "means none"), defaultValue: .integer(64),
        meaning: "Most extra threads that run queued work while workers are blocked (in `blocking {}` or detected).",
        property: "maxBlockingThreads")
    /// ``SchedulerConfiguration/idleMailboxReclaimMilliseconds``.
    public static let idleMailboxReclaim = ConfigurationVariable(
        name: "MN_IDLE_MAILBOX_RECLAIM_MS",
        values: .integer(0...3_600_000, unit: "milliseconds", zero: "turns the automatic walk off"),
        defaultValue: .integer(10_000),
        meaning: "Time between an actor system's walks that take back the mailbox rings of actors idle since the previous walk. Not used on a virtual clock.",
        property: "idleMailboxReclaimMilliseconds")
    /// The ring epoch's mode: process-wide, read once at its first use; no property in code.
    public static let ringEpoch = ConfigurationVariable(
        name: "MN_RING_EPOCH", values: .choice(["auto", "fenced"]), defaultValue: .word("auto"),
        meaning: "How the epoch that frees given-back mailbox rings orders its readers: `auto` uses membarrier where the kernel offers it, `fenced` puts a fence in every reader's section. Process-wide, read once at first use, checked by every scheduler's start.",
        property: nil)

    /// Every variable the runtime reads, in the order documentation lists them.
    public static let all: [ConfigurationVariable] = [
        workers, throughput, spinCount, idleSearch, runQueueCapacity, pinWorkers, blockingThreshold, maxBlockingThreads,
        idleMailboxReclaim, ringEpoch,
    ]

    /// The prefix every variable of the table has (and that marks an unknown one).
    public static let prefix = "MN_"

    /// The variable named `name`, nil when the table has none.
    public static func named(_ name: String) -> ConfigurationVariable? {
        all.first { $0.name == name }
    }

    // MARK: values

    /// The allowed values, in words (error messages and documentation).
    public var allowed: String {
        switch values {
        case .integer(let range, let powerOfTwo, let unit, let zero, let keyword):
            var text = powerOfTwo ? "a power of two in \(range)" : "an integer in \(range)"
            if let keyword { text += " or \"\(keyword)\"" }
            let notes = [unit, zero.map { "0 \($0)" }].compactMap { $0 }
            if !notes.isEmpty { text += " (\(notes.joined(separator: "; ")))" }
            return text
        case .boolean:
            return "one of 1, 0, true, false, yes, no, on, off"
        case .choice(let words):
            return "one of \(words.joined(separator: ", ")) (case ignored)"
        }
    }

    /// The default, in words.
    public var defaultDescription: String {
        switch defaultValue {
        case .integer(let value): return String(value)
        case .boolean(let value): return String(value)
        case .word(let word): return word
        case .usableCPUs: return "the usable CPUs"
        }
    }

    /// The integer range, nil for a variable that is not an integer.
    public var range: ClosedRange<Int>? {
        if case .integer(let range, _, _, _, _) = values { return range }
        return nil
    }

    /// The default number, nil for a default that is not a fixed number.
    public var integerDefault: Int? {
        if case .integer(let value) = defaultValue { return value }
        return nil
    }

    /// True when `value` (set in code) is allowed.
    public func accepts(_ value: Int) -> Bool {
        guard case .integer(let range, let powerOfTwo, _, _, _) = values else { return false }
        return range.contains(value) && (!powerOfTwo || value & (value - 1) == 0)
    }

    /// The meaning of one allowed text.
    public enum Parsed: Sendable, Hashable {
        /// A number in range.
        case integer(Int)
        /// A truth value.
        case boolean(Bool)
        /// One of the choices, lower-cased.
        case word(String)
        /// The keyword that asks for the default (`auto`).
        case useDefault
    }

    /// What `text` means for this variable, or an error naming the variable, `text` and
    /// the allowed values.
    public func parse(_ text: String) throws(SchedulerConfigurationError) -> Parsed {
        switch values {
        case .integer(_, _, _, _, let keyword):
            if let keyword, text.lowercased() == keyword { return .useDefault }
            if let value = Int(text), accepts(value) { return .integer(value) }
        case .boolean:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return .boolean(true)
            case "0", "false", "no", "off": return .boolean(false)
            default: break
            }
        case .choice(let words):
            if words.contains(text.lowercased()) { return .word(text.lowercased()) }
        }
        throw SchedulerConfigurationError(variable: name, value: text, allowed: allowed)
    }

    // MARK: documentation

    /// The table of every variable as Markdown: variable, allowed values, default,
    /// meaning. The DocC Configuration article holds a copy (a test compares them).
    public static var markdownTable: String {
        func cell(_ text: String) -> String { text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
        var out = "| Variable | Allowed | Default | Meaning |\n|---|---|---|---|\n"
        for variable in all {
            out += "| `\(variable.name)` | \(cell(variable.allowed)) | \(cell(variable.defaultDescription)) | \(cell(variable.meaning)) |\n"
        }
        return out
    }
}
