// ActorSystem+Dedicated: actors that own an OS thread, for code that must stay on one
// thread (thread-local C state, a run loop). Each lives in a private system with exactly
// one worker and no spares, shut down with this one, its figures added to the report.

import MNScheduler

extension ActorSystem {
    /// One worker, nothing else ever runs there: no blocked-turn detection, no spares.
    static var privateOneWorkerConfiguration: SchedulerConfiguration {
        SchedulerConfiguration(workers: 1, spinCount: 0, blockingThresholdMilliseconds: 0, maxBlockingThreads: 0,
                               readsEnvironment: false)
    }

    /// Keeps a private system to shut down with this one; false (and it is shut down) once
    /// this one is shutting down.
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
