// ActorSystem+MainThread: actors confined to the main thread. They share a private system
// whose one worker is donated by `runMainThreadActors()` (Scheduler.runDonatedWorker).
// This system's shutdown shuts it down, so that call returns; if it never ran, queued
// messages become dead letters and the worker is reported in `workersNotStopped`.

import MNScheduler

extension ActorSystem {
    /// The private system of the main-thread actors, created on first use.
    func mainThreadSystemForSpawn() throws(ActorSystemError) -> ActorSystem {
        try refuseOnDeterministicScheduler("spawn with placement .mainThread")
        guard let system = mainThreadSystem(creating: true) else { throw .shutDown }
        return system
    }

    /// Runs the turns of ``SpawnOptions/Placement/mainThread`` actors on the calling thread
    /// until this system shuts down (call it from the main thread, like `dispatchMain()`).
    /// Returns at once if none exist and the system is shut down, or another thread runs them.
    public func runMainThreadActors() {
        guard let system = mainThreadSystem(creating: !isShuttingDown) else { return }
        system.scheduler.runDonatedWorker()
    }

    /// Their private system (made on first use, shut down with this one).
    private func mainThreadSystem(creating: Bool) -> ActorSystem? {
        mainThreadSystemStorage.withLock { storage -> ActorSystem? in
            if let storage { return storage }
            guard creating, !isShuttingDown else { return nil }
            let scheduler: Scheduler
            do {
                scheduler = try Scheduler(configuration: ActorSystem.privateOneWorkerConfiguration, donatedWorkers: 1)
            } catch {
                preconditionFailure("a fixed one-worker configuration was refused: \(error)")
            }
            let system = ActorSystem(name: "\(name)/main-thread", scheduler: scheduler, ownsScheduler: true,
                                     defaultSupervisor: defaultSupervisor, logger: logger)
            guard adoptPrivateSystem(system) else { return nil }
            storage = system
            return system
        }
    }
}
