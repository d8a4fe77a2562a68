// ActorSystem+Deterministic — an actor system whose turns run only when a test drives its
// DeterministicScheduler.

import FastMailbox
import Logging

extension ActorSystem {
    /// Creates a system for tests that runs on a ``DeterministicScheduler``: no threads;
    /// every turn runs on the thread that drives `scheduler`, in the order its seed
    /// chooses, with virtual time.
    ///
    /// The system owns the deterministic scheduler's ``DeterministicScheduler/scheduler``:
    /// `shutdown(timeout:)` drives it until every actor stopped, then shuts it down.
    /// Event actors, pools, asks (from tasks on ``DeterministicScheduler/taskExecutor``)
    /// and supervision work as on a real scheduler; actors that need threads of their own
    /// (sequential, dedicated and main-thread actors) cannot be spawned: their spawn throws
    /// `ActorSystemError.unsupportedOnDeterministicScheduler(_:)`.
    public convenience init(name: String = "fastmailbox", scheduler: DeterministicScheduler,
                            defaultSupervisor: SupervisorStrategy = .default,
                            logger: Logger = Logger(label: "fastmailbox")) {
        self.init(name: name, scheduler: scheduler.scheduler, ownsScheduler: true,
                  defaultSupervisor: defaultSupervisor, logger: logger)
    }
}
