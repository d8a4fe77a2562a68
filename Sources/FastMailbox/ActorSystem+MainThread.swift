// ActorSystem+MainThread — actors confined to the main thread (issue 10, item 4).
//
// UI-style confinement: some state may be touched only from the main thread. A main-thread
// actor is an event actor whose every turn runs on the thread that calls
// `runMainThreadActors()` — the main thread, which the program hands over as it would to
// `dispatchMain()` on Linux (there is no run loop running there otherwise). It lives in a
// private ActorSystem (shared by all of this system's main-thread actors) whose one worker
// is *donated* (Scheduler.runDonatedWorker): no thread of its own. The confinement proxy
// pattern follows: other actors tell the main-thread actor, which alone touches the
// confined state. Shutdown: this system's shutdown shuts the private one down too, which
// makes `runMainThreadActors()` return; if it was never called, shutdown hands the queued
// main-thread actors to their after-shutdown path: their messages become dead letters
// (and the donated worker is reported in `workersNotStopped`), never lost silently.

import MNScheduler

extension ActorSystem {
    /// Spawns an event actor whose every turn runs on the thread that calls
    /// ``runMainThreadActors()`` (the main thread).
    ///
    /// All of this system's main-thread actors share that one thread, one turn at a time.
    /// Messages queue until ``runMainThreadActors()`` runs. Ordering, delivery and failure
    /// are those of ``spawn(name:mailboxCapacity:boundedMailbox:supervisor:_:)``; the name lives in the
    /// actors' private system (keep the ref), as for
    /// ``spawnDedicated(name:mailboxCapacity:supervisor:_:)``.
    /// - Throws: ``ActorSystemError`` (`.shutDown`, a bad capacity;
    ///   ``ActorSystemError/unsupportedOnDeterministicScheduler(_:)`` on a `DeterministicScheduler`).
    @inlinable @discardableResult
    public func spawnOnMainThread<A: EventActor>(
        name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable so the actor's turn is specialised for A here, as `spawn`'s is
        // (ActorCellBase, "Specialised turns").
        try mainThreadSystemForSpawn().spawn(name: name, mailboxCapacity: mailboxCapacity, supervisor: supervisor, factory)
    }

    /// The private system of the main-thread actors, created on first use.
    @usableFromInline
    func mainThreadSystemForSpawn() throws(ActorSystemError) -> ActorSystem {
        try refuseOnDeterministicScheduler("spawnOnMainThread")
        guard let system = mainThreadSystem(creating: true) else { throw .shutDown }
        return system
    }

    /// Runs the main-thread actors' turns on the calling thread until this system shuts
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
