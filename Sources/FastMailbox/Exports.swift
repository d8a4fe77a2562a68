// The scheduler types FastMailbox's own API names, under the same names: `import
// FastMailbox` is enough to configure an actor system in code and to catch its
// configuration error. FastMailbox re-exports nothing else of MNScheduler: a program that
// shares a `Scheduler` between systems, runs native actors on its executors
// (`MNSerialExecutor`, `MNGlobalActor`, `MNActor`, `MNTaskExecutor`) or marks `blocking`
// sections writes `import MNScheduler` as well (importing both is fine: these aliases
// name the same types).

import MNScheduler

/// The scheduler settings an ``ActorSystem`` starts with: workers, throughput, spinning,
/// run-queue capacity, pinning, blocking detection and idle-mailbox reclaim. Values set in
/// code win over `MN_*` environment variables, which win over the defaults.
public typealias SchedulerConfiguration = MNScheduler.SchedulerConfiguration

/// A scheduler setting (from code or the environment) that is malformed or out of range:
/// it names the variable, the value and the allowed range. Thrown by
/// ``ActorSystem/init(name:configuration:defaultSupervisor:logger:)``.
public typealias SchedulerConfigurationError = MNScheduler.SchedulerConfigurationError
