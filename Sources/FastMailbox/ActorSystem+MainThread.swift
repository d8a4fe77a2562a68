// ActorSystem+MainThread: actors confined to the main thread (SpawnOptions.Placement.mainThread).
//
// A main-thread actor is an ordinary actor whose every turn runs on the thread that calls
// `runMainThreadActors()`: the main thread, handed over as it would be to
// `dispatchMain()`. All of a system's main-thread actors share a private ActorSystem whose
// one worker is donated (Scheduler.runDonatedWorker), so it has no thread of its own.
// Other actors tell the main-thread actor, which alone touches the confined state.
// This system's shutdown shuts the private one down too, which makes
// `runMainThreadActors()` return. If it was never called, the queued actors' messages
// become dead letters, and the donated worker is reported in `workersNotStopped`.

import MNScheduler

extension ActorSystem {
    /// The private system of the main-thread actors, created on first use.
    func mainThreadSystemForSpawn() throws(ActorSystemError) -> ActorSystem {
        try refuseOnDeterministicScheduler("spawn with placement .mainThread")
        guard let system = mainThreadSystem(creating: true) else { throw .shutDown }
        return system
    }

    /// Runs the turns of the actors spawned with ``SpawnOptions/Placement/mainThread`` on
    /// the calling thread until this system shuts
    /// down (call it from the main thread, as you would `dispatchMain()`; shut the system
    /// down from another thread or task). Returns at once if there are no main-thread
    /// actors yet and the system is shut down, or if another thread already runs them.
    public func runMainThreadActors() {
        guard let system = mainThreadSystem(creating: !isShuttingDown) else { return }
        system.scheduler.runDonatedWorker()
    }

    /// The private system of the main-thread actors (made on first use, shut down with this
    /// one through `dedicatedSystems`).
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
