// ActorSystem+Dedicated: actors that own an OS thread (SpawnOptions.Placement.dedicatedThread).
//
// Some code must stay on one thread for its whole life: a C library with thread-local
// state, a run loop, an OpenGL context. A dedicated actor is an ordinary actor in a
// private ActorSystem whose scheduler has exactly one worker and no spares, so all its
// turns run on that thread and nothing else does. The parent system shuts the private
// one down with its own shutdown and adds its figures to the report.

import MNScheduler

extension ActorSystem {
    /// One worker, nothing else ever runs there: no blocked-turn detection, no spares.
    static var privateOneWorkerConfiguration: SchedulerConfiguration {
        SchedulerConfiguration(workers: 1, spinCount: 0, blockingThresholdMilliseconds: 0, maxBlockingThreads: 0,
                               readsEnvironment: false)
    }

    /// Keeps a private system (dedicated or main-thread actors) to shut it down with this
    /// one; false (and the private system shut down) once this one is shutting down.
    func adoptPrivateSystem(_ system: ActorSystem) -> Bool {
        let adopted = dedicatedSystems.withLock { systems -> Bool in
            if isShuttingDown { return false }
            systems.append(system)
            return true
        }
        if !adopted { system.shutdown(timeout: .zero) }
        return adopted
    }

    /// A new private one-worker system for a dedicated actor, adopted by this one.
    func dedicatedSystem(name: String?) throws(ActorSystemError) -> ActorSystem {
        try refuseOnDeterministicScheduler("spawn with placement .dedicatedThread")
        let system: ActorSystem
        do {
            system = try ActorSystem(name: "\(self.name)/\(name ?? "dedicated")",
                                     configuration: ActorSystem.privateOneWorkerConfiguration,
                                     defaultSupervisor: defaultSupervisor, logger: logger)
        } catch {
            preconditionFailure("a fixed one-worker configuration was refused: \(error)")
        }
        guard adoptPrivateSystem(system) else { throw .shutDown }
        return system
    }
}
