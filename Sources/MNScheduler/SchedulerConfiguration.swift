// SchedulerConfiguration: the scheduler's knobs, where each value comes from, and the
// validation that stops start-up on a bad value.
//
// Precedence: defaults < environment < code. Code wins because a program that sets a
// value means it; the environment tunes what the program left open. MN_* variables are
// read once when a Scheduler is created. MN_RING_EPOCH is the process's: every start
// checks it, even with `readsEnvironment: false`.
//
// Each setting's variable, range, default and meaning live in one table,
// ConfigurationVariable.all. Resolution is a pure function of the configuration, an
// environment dictionary and a CPUAvailability, so every bad value is testable.

/// The scheduler's tuning knobs. `nil` means "not set in code": the environment variable
/// decides, else the default (precedence: defaults < environment < code).
///
/// A value type; thread-safe to copy and share.
public struct SchedulerConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// Worker threads (MN_WORKERS). Default: the CPUs this process may run on.
    public var workers: Int?
    /// Most items a unit processes per turn before it yields its worker (MN_THROUGHPUT).
    public var throughput: Int?
    /// Search rounds an idle worker spins before it sleeps (MN_SPIN; the default and why:
    /// ``ConfigurationVariable/spinCount``).
    public var spinCount: Int?
    /// Microseconds an idle worker that has just run a stream of turns goes on searching
    /// before it sleeps (MN_IDLE_SEARCH_US; 0: it sleeps after its spin rounds; the default
    /// and why: ``ConfigurationVariable/idleSearch``).
    public var idleSearchMicroseconds: Int?
    /// Slots in each worker's local run queue, a power of two (MN_RUNQUEUE_CAPACITY).
    /// The injection queue's ring has 4× as many, and spills in order beyond that.
    public var runQueueCapacity: Int?
    /// Pin worker i to the i-th CPU of the affinity mask (MN_PIN).
    public var pinWorkers: Bool?
    /// Milliseconds a worker may stay inside one turn, while other work waits, before the
    /// scheduler treats it as blocked and lets another thread take its queued work
    /// (MN_BLOCKING_THRESHOLD_MS; 0 turns detection off).
    public var blockingThresholdMilliseconds: Int?
    /// Most extra threads that run queued work while workers are blocked (in `blocking {}`
    /// or detected) (MN_MAX_BLOCKING_THREADS; 0: none).
    public var maxBlockingThreads: Int?
    /// Milliseconds between an actor system's walks that take back the mailbox rings of
    /// actors idle since the previous walk (`ActorSystem.reclaimIdleMailboxes()`;
    /// MN_IDLE_MAILBOX_RECLAIM_MS; default 10,000; 0: no automatic walk). Not used on a
    /// virtual clock.
    public var idleMailboxReclaimMilliseconds: Int?
    /// Whether MN_* variables are consulted for the properties left nil (default true).
    /// MN_RING_EPOCH, the process's and not a scheduler's, is checked either way.
    public var readsEnvironment: Bool

    /// A configuration with the given properties set in code; each one left nil comes
    /// from its environment variable (when `readsEnvironment`), else its default.
    /// Values are checked by ``resolved()``, which a `Scheduler` calls when it starts.
    public init(workers: Int? = nil, throughput: Int? = nil, spinCount: Int? = nil,
                idleSearchMicroseconds: Int? = nil, runQueueCapacity: Int? = nil, pinWorkers: Bool? = nil,
                blockingThresholdMilliseconds: Int? = nil, maxBlockingThreads: Int? = nil,
                idleMailboxReclaimMilliseconds: Int? = nil, readsEnvironment: Bool = true) {
        self.workers = workers
        self.throughput = throughput
        self.spinCount = spinCount
        self.idleSearchMicroseconds = idleSearchMicroseconds
        self.runQueueCapacity = runQueueCapacity
        self.pinWorkers = pinWorkers
        self.blockingThresholdMilliseconds = blockingThresholdMilliseconds
        self.maxBlockingThreads = maxBlockingThreads
        self.idleMailboxReclaimMilliseconds = idleMailboxReclaimMilliseconds
        self.readsEnvironment = readsEnvironment
    }

    // MARK: settings

    /// One knob: its environment variable, property name, default and allowed range.
    public enum Setting: String, CaseIterable, Sendable {
        /// ``SchedulerConfiguration/workers`` (MN_WORKERS).
        case workers
        /// ``SchedulerConfiguration/throughput`` (MN_THROUGHPUT).
        case throughput
        /// ``SchedulerConfiguration/spinCount`` (MN_SPIN).
        case spinCount
        /// ``SchedulerConfiguration/idleSearchMicroseconds`` (MN_IDLE_SEARCH_US).
        case idleSearchMicroseconds
        /// ``SchedulerConfiguration/runQueueCapacity`` (MN_RUNQUEUE_CAPACITY).
        case runQueueCapacity
        /// ``SchedulerConfiguration/pinWorkers`` (MN_PIN).
        case pinWorkers
        /// ``SchedulerConfiguration/blockingThresholdMilliseconds`` (MN_BLOCKING_THRESHOLD_MS).
        case blockingThresholdMilliseconds
        /// ``SchedulerConfiguration/maxBlockingThreads`` (MN_MAX_BLOCKING_THREADS).
        case maxBlockingThreads
        /// ``SchedulerConfiguration/idleMailboxReclaimMilliseconds`` (MN_IDLE_MAILBOX_RECLAIM_MS).
        case idleMailboxReclaimMilliseconds

        /// Its entry in the table of variables.
        public var variable: ConfigurationVariable {
            switch self {
            case .workers: return .workers
            case .throughput: return .throughput
            case .spinCount: return .spinCount
            case .idleSearchMicroseconds: return .idleSearch
            case .runQueueCapacity: return .runQueueCapacity
            case .pinWorkers: return .pinWorkers
            case .blockingThresholdMilliseconds: return .blockingThreshold
            case .maxBlockingThreads: return .maxBlockingThreads
            case .idleMailboxReclaimMilliseconds: return .idleMailboxReclaim
            }
        }

        /// The environment variable that sets it.
        public var environmentVariable: String { variable.name }

        /// The property that sets it in code.
        public var codeName: String { "SchedulerConfiguration.\(rawValue)" }

        /// The allowed values, in words (used in error messages).
        public var allowed: String { variable.allowed }
    }

    /// Where an effective value came from.
    public enum Source: String, Sendable, Equatable {
        /// The built-in default: neither code nor the environment set it.
        case `default`
        /// Its MN_* environment variable.
        case environment
        /// The property, set in code.
        case code
    }

    /// Allowed worker counts.
    public static let workerRange = ConfigurationVariable.workers.range!
    /// Allowed throughput (items per turn).
    public static let throughputRange = ConfigurationVariable.throughput.range!
    /// Allowed spin counts.
    public static let spinRange = ConfigurationVariable.spinCount.range!
    /// Allowed run-queue capacities (also: a power of two).
    public static let runQueueCapacityRange = ConfigurationVariable.runQueueCapacity.range!
    /// Items per turn when nothing else is set.
    public static let defaultThroughput = ConfigurationVariable.throughput.integerDefault!
    /// Search rounds before sleeping when nothing else is set.
    public static let defaultSpinCount = ConfigurationVariable.spinCount.integerDefault!
    /// Allowed idle search times (microseconds; 0 = none).
    public static let idleSearchRange = ConfigurationVariable.idleSearch.range!
    /// Idle search time when nothing else is set (microseconds).
    public static let defaultIdleSearchMicroseconds = ConfigurationVariable.idleSearch.integerDefault!
    /// Local run-queue slots when nothing else is set.
    public static let defaultRunQueueCapacity = ConfigurationVariable.runQueueCapacity.integerDefault!
    /// Pinning when nothing else is set.
    public static let defaultPinWorkers = ConfigurationVariable.pinWorkers.defaultValue == .boolean(true)
    /// Allowed blocking thresholds (milliseconds; 0 = off).
    public static let blockingThresholdRange = ConfigurationVariable.blockingThreshold.range!
    /// Blocking threshold when nothing else is set (milliseconds).
    public static let defaultBlockingThresholdMilliseconds = ConfigurationVariable.blockingThreshold.integerDefault!
    /// Allowed extra-thread caps.
    public static let maxBlockingThreadsRange = ConfigurationVariable.maxBlockingThreads.range!
    /// Extra-thread cap when nothing else is set.
    public static let defaultMaxBlockingThreads = ConfigurationVariable.maxBlockingThreads.integerDefault!
    /// Allowed idle-mailbox reclaim intervals (milliseconds; 0 = off).
    public static let idleMailboxReclaimRange = ConfigurationVariable.idleMailboxReclaim.range!
    /// Idle-mailbox reclaim interval when nothing else is set (milliseconds). A ring is given
    /// back within two intervals of its actor's last message.
    public static let defaultIdleMailboxReclaimMilliseconds = ConfigurationVariable.idleMailboxReclaim.integerDefault!

    public var description: String {
        func show<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "unset" }
        return "SchedulerConfiguration(workers: \(show(workers)), throughput: \(show(throughput)), spinCount: \(show(spinCount)), idleSearchMicroseconds: \(show(idleSearchMicroseconds)), runQueueCapacity: \(show(runQueueCapacity)), pinWorkers: \(show(pinWorkers)), blockingThresholdMilliseconds: \(show(blockingThresholdMilliseconds)), maxBlockingThreads: \(show(maxBlockingThreads)), idleMailboxReclaimMilliseconds: \(show(idleMailboxReclaimMilliseconds)), readsEnvironment: \(readsEnvironment))"
    }

    // MARK: resolution

    /// The MN_* variables of this process (only those that are set, known or not).
    public static func processEnvironment() -> [String: String] {
        ConfigurationVariable.processEnvironment()
    }

    /// Resolves against this process's environment and CPUs.
    public func resolved() throws(SchedulerConfigurationError) -> ResolvedSchedulerConfiguration {
        try resolved(environment: SchedulerConfiguration.processEnvironment(), cpus: CPUAvailability.current())
    }

    /// Resolves against the given environment and CPUs: a pure function.
    /// Throws for the first malformed or out-of-range value, environment or code, naming it.
    /// With `readsEnvironment` false only MN_RING_EPOCH is read from `environment` (checked,
    /// not used: the ring epoch reads it itself, for the whole process).
    public func resolved(environment: [String: String], cpus: CPUAvailability) throws(SchedulerConfigurationError)
        -> ResolvedSchedulerConfiguration
    {
        _ = try RingEpoch.checkEnvironment(environment)
        let env = readsEnvironment ? environment : [:]
        var sources: [Setting: Source] = [:]

        func integer(_ setting: Setting, code: Int?, default def: Int) throws(SchedulerConfigurationError) -> Int {
            let variable = setting.variable
            if let code {
                guard variable.accepts(code) else {
                    throw SchedulerConfigurationError(variable: setting.codeName, value: String(code), allowed: variable.allowed)
                }
                sources[setting] = .code
                return code
            }
            if let text = env[variable.name] {
                sources[setting] = .environment
                if case .integer(let value) = try variable.parse(text) { return value }
                return def  // the keyword that asks for the default ("auto")
            }
            sources[setting] = .default
            return def
        }

        let workers = try integer(.workers, code: self.workers,
                                  default: min(cpus.usableCPUs, SchedulerConfiguration.workerRange.upperBound))
        let throughput = try integer(.throughput, code: self.throughput, default: SchedulerConfiguration.defaultThroughput)
        let spin = try integer(.spinCount, code: self.spinCount, default: SchedulerConfiguration.defaultSpinCount)
        let idleSearch = try integer(.idleSearchMicroseconds, code: self.idleSearchMicroseconds,
                                     default: SchedulerConfiguration.defaultIdleSearchMicroseconds)
        let capacity = try integer(.runQueueCapacity, code: self.runQueueCapacity,
                                   default: SchedulerConfiguration.defaultRunQueueCapacity)
        let threshold = try integer(.blockingThresholdMilliseconds, code: self.blockingThresholdMilliseconds,
                                    default: SchedulerConfiguration.defaultBlockingThresholdMilliseconds)
        let maxBlocking = try integer(.maxBlockingThreads, code: self.maxBlockingThreads,
                                      default: SchedulerConfiguration.defaultMaxBlockingThreads)
        let reclaim = try integer(.idleMailboxReclaimMilliseconds, code: self.idleMailboxReclaimMilliseconds,
                                  default: SchedulerConfiguration.defaultIdleMailboxReclaimMilliseconds)
        let pin: Bool
        if let code = self.pinWorkers {
            pin = code
            sources[.pinWorkers] = .code
        } else if let text = env[Setting.pinWorkers.environmentVariable] {
            pin = try Setting.pinWorkers.variable.parse(text) == .boolean(true)
            sources[.pinWorkers] = .environment
        } else {
            pin = SchedulerConfiguration.defaultPinWorkers
            sources[.pinWorkers] = .default
        }
        return ResolvedSchedulerConfiguration(
            workers: workers, throughput: throughput, spinCount: spin, idleSearchMicroseconds: idleSearch,
            runQueueCapacity: capacity,
            pinWorkers: pin, blockingThresholdMilliseconds: threshold, maxBlockingThreads: maxBlocking,
            idleMailboxReclaimMilliseconds: reclaim, sources: sources, cpus: cpus)
    }
}

/// The effective configuration of a scheduler: every value, and where it came from.
///
/// A value type; thread-safe to copy and share.
public struct ResolvedSchedulerConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// Worker threads.
    public let workers: Int
    /// Most items per turn.
    public let throughput: Int
    /// Search rounds before a worker sleeps.
    public let spinCount: Int
    /// Microseconds an idle worker searches after a stream before it sleeps (0: none).
    public let idleSearchMicroseconds: Int
    /// Slots per local run queue (a power of two).
    public let runQueueCapacity: Int
    /// Whether workers are pinned to CPUs.
    public let pinWorkers: Bool
    /// Milliseconds in one turn, with work waiting, before a worker counts as blocked (0: off).
    public let blockingThresholdMilliseconds: Int
    /// Most extra threads for blocked workers' queued work.
    public let maxBlockingThreads: Int
    /// Milliseconds between automatic idle-mailbox walks (0: none).
    public let idleMailboxReclaimMilliseconds: Int
    /// Where each value came from (default, environment, code).
    public let sources: [SchedulerConfiguration.Setting: SchedulerConfiguration.Source]
    /// The CPUs seen when the default worker count was computed.
    public let cpus: CPUAvailability

    /// The same values as a configuration with every property set (so passing it to a new
    /// Scheduler reproduces them whatever the environment says).
    public var configuration: SchedulerConfiguration {
        SchedulerConfiguration(workers: workers, throughput: throughput, spinCount: spinCount,
                               idleSearchMicroseconds: idleSearchMicroseconds, runQueueCapacity: runQueueCapacity, pinWorkers: pinWorkers,
                               blockingThresholdMilliseconds: blockingThresholdMilliseconds,
                               maxBlockingThreads: maxBlockingThreads,
                               idleMailboxReclaimMilliseconds: idleMailboxReclaimMilliseconds)
    }

    /// The source of one setting.
    public func source(of setting: SchedulerConfiguration.Setting) -> SchedulerConfiguration.Source {
        sources[setting] ?? .default
    }

    /// The effective value of one setting, as text.
    public func value(of setting: SchedulerConfiguration.Setting) -> String {
        switch setting {
        case .workers: return String(workers)
        case .throughput: return String(throughput)
        case .spinCount: return String(spinCount)
        case .idleSearchMicroseconds: return String(idleSearchMicroseconds)
        case .runQueueCapacity: return String(runQueueCapacity)
        case .pinWorkers: return String(pinWorkers)
        case .blockingThresholdMilliseconds: return String(blockingThresholdMilliseconds)
        case .maxBlockingThreads: return String(maxBlockingThreads)
        case .idleMailboxReclaimMilliseconds: return String(idleMailboxReclaimMilliseconds)
        }
    }

    /// One line per setting: name, value, source, variable, allowed values and default,
    /// then the CPUs. Used by `ring-bench --print-config`.
    public var description: String {
        var out = "MNScheduler configuration (precedence: defaults < environment < code)\n"
        let width = SchedulerConfiguration.Setting.allCases.map(\.rawValue.count).max() ?? 0
        for setting in SchedulerConfiguration.Setting.allCases {
            let variable = setting.variable
            let name = setting.rawValue.padding(toLength: width)
            let shown = value(of: setting).padding(toLength: 7)
            out += "  \(name) \(shown) from \(source(of: setting).rawValue.padding(toLength: 11)) "
                + "(\(variable.name): \(variable.allowed); default \(variable.defaultDescription))\n"
        }
        out += "  CPUs: \(cpus)"
        return out
    }
}

extension String {
    fileprivate func padding(toLength n: Int) -> String {
        count >= n ? self : self + String(repeating: " ", count: n - count)
    }
}
