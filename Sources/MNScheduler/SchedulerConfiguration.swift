// SchedulerConfiguration — the scheduler's knobs, where each value comes from, and the
// validation that stops start-up on a bad value.
//
// Precedence: defaults < environment < code. A property set in code (non-nil) wins;
// otherwise the MN_* environment variable, read once when a Scheduler is created (for
// `Scheduler.shared`: once per process); otherwise the built-in default. Code wins because
// a program that sets a value means it (tests pin `workers: 2`); the environment tunes
// everything the program left open. `readsEnvironment: false` ignores the environment (but
// for the check of MN_RING_EPOCH below).
//
//   setting            variable               default                allowed
//   workers            MN_WORKERS             usable CPUs (*)        1...1024, or "auto"
//   throughput         MN_THROUGHPUT          64                     1...1_000_000
//   spinCount          MN_SPIN                64                     0...1_000_000
//   runQueueCapacity   MN_RUNQUEUE_CAPACITY   256                    power of two in 4...65536
//   pinWorkers         MN_PIN                 false                  1/0, true/false, yes/no, on/off
//   blockingThreshold  MN_BLOCKING_THRESHOLD_MS  10                  0...60000 (0: detection off)
//   maxBlockingThreads MN_MAX_BLOCKING_THREADS   64                  0...4096
//   idleMailboxReclaim MN_IDLE_MAILBOX_RECLAIM_MS 10000              0...3600000 (0: off)
//   (*) CPUAvailability: affinity mask, cgroup quota (v2 cpu.max, v1 cfs), online CPUs.
//
// One more variable is checked here but is not a scheduler's setting: MN_RING_EPOCH (auto,
// the default, or fenced) chooses the ring epoch's mode for the whole process, once, at its
// first use (RingEpoch.swift, "Choosing the mode"); it has no property in code. It is
// checked even with `readsEnvironment: false` (the process reads it whatever a scheduler
// says), so a bad value stops every scheduler's start like the others.
//
// Resolution is a pure function of the configuration, an environment dictionary and a
// CPUAvailability, so every bad value is testable without setenv.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// The scheduler's tuning knobs. `nil` means "not set in code": the environment variable
/// decides, else the default (precedence: defaults < environment < code).
///
/// A value type; thread-safe to copy and share.
public struct SchedulerConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// Worker threads (MN_WORKERS). Default: the CPUs this process may run on.
    public var workers: Int?
    /// Most items a unit processes per turn before it yields its worker (MN_THROUGHPUT).
    public var throughput: Int?
    /// Search rounds an idle worker spins before it sleeps (MN_SPIN).
    public var spinCount: Int?
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

    public init(workers: Int? = nil, throughput: Int? = nil, spinCount: Int? = nil,
                runQueueCapacity: Int? = nil, pinWorkers: Bool? = nil,
                blockingThresholdMilliseconds: Int? = nil, maxBlockingThreads: Int? = nil,
                idleMailboxReclaimMilliseconds: Int? = nil, readsEnvironment: Bool = true) {
        self.workers = workers
        self.throughput = throughput
        self.spinCount = spinCount
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
        case workers, throughput, spinCount, runQueueCapacity, pinWorkers, blockingThresholdMilliseconds, maxBlockingThreads
        case idleMailboxReclaimMilliseconds

        /// The environment variable that sets it.
        public var environmentVariable: String {
            switch self {
            case .workers: return "MN_WORKERS"
            case .throughput: return "MN_THROUGHPUT"
            case .spinCount: return "MN_SPIN"
            case .runQueueCapacity: return "MN_RUNQUEUE_CAPACITY"
            case .pinWorkers: return "MN_PIN"
            case .blockingThresholdMilliseconds: return "MN_BLOCKING_THRESHOLD_MS"
            case .maxBlockingThreads: return "MN_MAX_BLOCKING_THREADS"
            case .idleMailboxReclaimMilliseconds: return "MN_IDLE_MAILBOX_RECLAIM_MS"
            }
        }

        /// The property that sets it in code.
        public var codeName: String { "SchedulerConfiguration.\(rawValue)" }

        /// The allowed values, in words (used in error messages).
        public var allowed: String {
            switch self {
            case .workers: return "an integer in \(SchedulerConfiguration.workerRange) or \"auto\""
            case .throughput: return "an integer in 1...1000000"
            case .spinCount: return "an integer in 0...1000000"
            case .runQueueCapacity: return "a power of two in 4...65536"
            case .pinWorkers: return "one of 1, 0, true, false, yes, no, on, off"
            case .blockingThresholdMilliseconds: return "an integer in 0...60000 (milliseconds; 0 turns detection off)"
            case .maxBlockingThreads: return "an integer in 0...4096"
            case .idleMailboxReclaimMilliseconds: return "an integer in 0...3600000 (milliseconds; 0 turns the automatic walk off)"
            }
        }
    }

    /// Where an effective value came from.
    public enum Source: String, Sendable, Equatable {
        case `default`, environment, code
    }

    /// Allowed worker counts.
    public static let workerRange = 1...1024
    /// Allowed throughput (items per turn).
    public static let throughputRange = 1...1_000_000
    /// Allowed spin counts.
    public static let spinRange = 0...1_000_000
    /// Allowed run-queue capacities (also: a power of two).
    public static let runQueueCapacityRange = 4...65536
    /// Items per turn when nothing else is set.
    public static let defaultThroughput = 64
    /// Search rounds before sleeping when nothing else is set.
    public static let defaultSpinCount = 64
    /// Local run-queue slots when nothing else is set.
    public static let defaultRunQueueCapacity = 256
    /// Pinning when nothing else is set.
    public static let defaultPinWorkers = false
    /// Allowed blocking thresholds (milliseconds; 0 = off).
    public static let blockingThresholdRange = 0...60_000
    /// Blocking threshold when nothing else is set (milliseconds).
    public static let defaultBlockingThresholdMilliseconds = 10
    /// Allowed extra-thread caps.
    public static let maxBlockingThreadsRange = 0...4096
    /// Extra-thread cap when nothing else is set.
    public static let defaultMaxBlockingThreads = 64
    /// Allowed idle-mailbox reclaim intervals (milliseconds; 0 = off).
    public static let idleMailboxReclaimRange = 0...3_600_000
    /// Idle-mailbox reclaim interval when nothing else is set (milliseconds): one walk every 10 s.
    /// 10 s: a walk costs about 100–200 ns per live actor (ring-bench spawn's
    /// `idle_walk_ns_per_actor` on a loaded 2-core machine), so a million actors cost a
    /// walker under 2 % of one core; a ring is given back 10–20 s after its last message.
    public static let defaultIdleMailboxReclaimMilliseconds = 10_000

    public var description: String {
        func show<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "unset" }
        return "SchedulerConfiguration(workers: \(show(workers)), throughput: \(show(throughput)), spinCount: \(show(spinCount)), runQueueCapacity: \(show(runQueueCapacity)), pinWorkers: \(show(pinWorkers)), blockingThresholdMilliseconds: \(show(blockingThresholdMilliseconds)), maxBlockingThreads: \(show(maxBlockingThreads)), idleMailboxReclaimMilliseconds: \(show(idleMailboxReclaimMilliseconds)), readsEnvironment: \(readsEnvironment))"
    }

    // MARK: resolution

    /// The MN_* variables of this process (only those that are set): every setting's, and
    /// MN_RING_EPOCH.
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        for variable in Setting.allCases.map(\.environmentVariable) + [RingEpoch.environmentVariable] {
            if let raw = getenv(variable) {
                out[variable] = String(cString: raw)
            }
        }
        return out
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

        func integer(_ setting: Setting, code: Int?, range: ClosedRange<Int>, default def: Int,
                     accept: (Int) -> Bool = { _ in true }) throws(SchedulerConfigurationError) -> Int {
            if let code {
                guard range.contains(code), accept(code) else {
                    throw SchedulerConfigurationError(variable: setting.codeName, value: String(code), allowed: setting.allowed)
                }
                sources[setting] = .code
                return code
            }
            if let text = env[setting.environmentVariable] {
                if setting == .workers, text.lowercased() == "auto" {
                    sources[setting] = .environment
                    return def
                }
                guard let value = Int(text), range.contains(value), accept(value) else {
                    throw SchedulerConfigurationError(variable: setting.environmentVariable, value: text, allowed: setting.allowed)
                }
                sources[setting] = .environment
                return value
            }
            sources[setting] = .default
            return def
        }

        let workers = try integer(.workers, code: self.workers, range: SchedulerConfiguration.workerRange,
                                  default: min(cpus.usableCPUs, SchedulerConfiguration.workerRange.upperBound))
        let throughput = try integer(.throughput, code: self.throughput, range: SchedulerConfiguration.throughputRange,
                                     default: SchedulerConfiguration.defaultThroughput)
        let spin = try integer(.spinCount, code: self.spinCount, range: SchedulerConfiguration.spinRange,
                               default: SchedulerConfiguration.defaultSpinCount)
        let capacity = try integer(.runQueueCapacity, code: self.runQueueCapacity,
                                   range: SchedulerConfiguration.runQueueCapacityRange,
                                   default: SchedulerConfiguration.defaultRunQueueCapacity,
                                   accept: { $0 & ($0 - 1) == 0 })
        let threshold = try integer(.blockingThresholdMilliseconds, code: self.blockingThresholdMilliseconds,
                                    range: SchedulerConfiguration.blockingThresholdRange,
                                    default: SchedulerConfiguration.defaultBlockingThresholdMilliseconds)
        let maxBlocking = try integer(.maxBlockingThreads, code: self.maxBlockingThreads,
                                      range: SchedulerConfiguration.maxBlockingThreadsRange,
                                      default: SchedulerConfiguration.defaultMaxBlockingThreads)
        let reclaim = try integer(.idleMailboxReclaimMilliseconds, code: self.idleMailboxReclaimMilliseconds,
                                  range: SchedulerConfiguration.idleMailboxReclaimRange,
                                  default: SchedulerConfiguration.defaultIdleMailboxReclaimMilliseconds)
        let pin: Bool
        if let code = self.pinWorkers {
            pin = code
            sources[.pinWorkers] = .code
        } else if let text = env[Setting.pinWorkers.environmentVariable] {
            switch text.lowercased() {
            case "1", "true", "yes", "on": pin = true
            case "0", "false", "no", "off": pin = false
            default:
                throw SchedulerConfigurationError(variable: Setting.pinWorkers.environmentVariable, value: text,
                                                  allowed: Setting.pinWorkers.allowed)
            }
            sources[.pinWorkers] = .environment
        } else {
            pin = SchedulerConfiguration.defaultPinWorkers
            sources[.pinWorkers] = .default
        }
        return ResolvedSchedulerConfiguration(
            workers: workers, throughput: throughput, spinCount: spin, runQueueCapacity: capacity,
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
                               runQueueCapacity: runQueueCapacity, pinWorkers: pinWorkers,
                               blockingThresholdMilliseconds: blockingThresholdMilliseconds,
                               maxBlockingThreads: maxBlockingThreads,
                               idleMailboxReclaimMilliseconds: idleMailboxReclaimMilliseconds)
    }

    /// The source of one setting.
    public func source(of setting: SchedulerConfiguration.Setting) -> SchedulerConfiguration.Source {
        sources[setting] ?? .default
    }

    /// One line per setting: name, value, source and variable. Used by `ring-bench --print-config`.
    public var description: String {
        let rows: [(SchedulerConfiguration.Setting, String)] = [
            (.workers, String(workers)), (.throughput, String(throughput)), (.spinCount, String(spinCount)),
            (.runQueueCapacity, String(runQueueCapacity)), (.pinWorkers, String(pinWorkers)),
            (.blockingThresholdMilliseconds, String(blockingThresholdMilliseconds)),
            (.maxBlockingThreads, String(maxBlockingThreads)),
            (.idleMailboxReclaimMilliseconds, String(idleMailboxReclaimMilliseconds)),
        ]
        var out = "MNScheduler configuration (precedence: defaults < environment < code)\n"
        for (setting, value) in rows {
            let name = setting.rawValue.padding(toLength: 29)
            let shown = value.padding(toLength: 7)
            out += "  \(name) \(shown) from \(source(of: setting).rawValue.padding(toLength: 11)) (\(setting.environmentVariable))\n"
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
