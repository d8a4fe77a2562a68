// ActorSystem+Dedicated — actors that own an OS thread (issue 10, item 4).
//
// Some code must stay on one thread for its whole life: a C library with thread-local
// state, a run loop, an OpenGL context. A dedicated actor is an ordinary event actor whose
// turns all run on one thread of its own: it lives in a private ActorSystem whose
// scheduler has exactly one worker (no blocking detection, no spares: nothing else ever
// runs there). Its ActorRef is like any other (tell, ask, stop, watch); the parent system
// keeps the private system and shuts it down with its own shutdown, adding its figures
// to the report, so the books stay whole.

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

    /// Spawns an event actor on a dedicated OS thread: every turn of it — `preStart`,
    /// each `receive`, `postStop` — runs on that one thread, and nothing else does.
    ///
    /// Use it for code that must own a thread (thread-local state in a C library, a run
    /// loop); a blocking call on that thread starves no other actor. Costs an OS thread
    /// and a private scheduler per actor, so keep such actors few.
    ///
    /// - Ordering, delivery, failure: as for ``spawn(name:mailboxCapacity:boundedMailbox:supervisor:_:)``
    ///   (`supervisor` nil: this system's default).
    /// - Name: registered in the actor's private system, so ``lookup(_:as:)`` on this
    ///   system does not find it: keep the returned ref.
    /// - Shutdown: this system's ``shutdown(timeout:)`` shuts the private system down too
    ///   (within the same timeout) and adds its figures to the report.
    /// - Throws: ``ActorSystemError`` (`.shutDown`, a bad capacity, a duplicate name in
    ///   the private system cannot happen;
    ///   ``ActorSystemError/unsupportedOnDeterministicScheduler(_:)`` on a `DeterministicScheduler`).
    @inlinable @discardableResult
    public func spawnDedicated<A: EventActor>(
        name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable so the actor's turn is specialised for A here, as `spawn`'s is
        // (ActorCellBase, "Specialised turns").
        try dedicatedSystem(name: name, supervisor: supervisor).spawn(name: name, mailboxCapacity: mailboxCapacity, factory)
    }

    /// A new private one-worker system for a dedicated actor, adopted by this one.
    @usableFromInline
    func dedicatedSystem(name: String?, supervisor: SupervisorStrategy?) throws(ActorSystemError) -> ActorSystem {
        try refuseOnDeterministicScheduler("spawnDedicated")
        let system: ActorSystem
        do {
            system = try ActorSystem(name: "\(self.name)/\(name ?? "dedicated")",
                                     configuration: ActorSystem.privateOneWorkerConfiguration,
                                     defaultSupervisor: supervisor ?? defaultSupervisor, logger: logger)
        } catch {
            preconditionFailure("a fixed one-worker configuration was refused: \(error)")
        }
        guard adoptPrivateSystem(system) else { throw .shutDown }
        return system
    }
}
