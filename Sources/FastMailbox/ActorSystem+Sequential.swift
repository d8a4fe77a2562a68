// ActorSystem+Sequential — spawning thread-style actors (see SequentialActorCell).

import MNScheduler

extension ActorSystem {
    /// Spawns a sequential (thread-style) actor: `body` is its whole life, written as a loop
    /// over its ``Inbox`` — `for await message in inbox { ... }` or
    /// `let message = try await inbox.receive()`, including selective receive with a timeout.
    /// Name the message type once, with `of:` or with the ref's type
    /// (`try system.spawn(of: Int.self) { inbox in … }`).
    ///
    /// The body runs as a task on the scheduler workers of its placement
    /// (`scheduler.taskExecutor`): it holds a worker only while it computes and no thread
    /// while it waits, so any number of sequential actors share the workers.
    ///
    /// - Options: name, mailbox capacity and placement apply. A ``SpawnOptions/supervisor``,
    ///   a ``SpawnOptions/MailboxKind/bounded`` mailbox and a ``SpawnOptions/pool`` do not
    ///   (``ActorSystemError/unsupportedSpawnOptions(_:)``): see Lifecycle.
    /// - Thread-safety: any thread or task. The returned ref is like any other: tell, ask,
    ///   stop, watch from an event actor (`context.watch(ref)` gets `.terminated`).
    /// - Ordering: messages from one sender arrive in the order sent.
    /// - Lifecycle: the actor stops when the body returns (``TerminationReason/finished``),
    ///   when `ref.stop()` ends it (receive throws ``ActorStoppedError``, the task is
    ///   cancelled; ``TerminationReason/stopped``), or when the body throws any other error
    ///   (``TerminationReason/failed(_:)`` with the error's description; watchers are told).
    ///   Sequential actors are not restarted by supervisors: the body's local state is gone
    ///   with its stack, so catch inside the loop to survive an error, or watch the actor and
    ///   spawn a new one. Messages left in the inbox when it stops, and later tells, go to
    ///   dead letters. `shutdown()` closes the inbox, lets a running body take what is queued
    ///   (a body that had not started yet never runs: its messages go to dead letters), then
    ///   waits for it to end; a body that neither receives nor returns keeps it waiting until
    ///   its timeout (reported in `actorsNotStopped`); its task is then cancelled, and
    ///   whatever runs after the scheduler shut down continues on Swift's global executor.
    /// - Throws: ``ActorSystemError`` (duplicate name, bad mailbox capacity, unsupported
    ///   options, shut down, or ``ActorSystemError/unsupportedOnDeterministicScheduler(_:)``
    ///   on a `DeterministicScheduler`).
    @discardableResult
    public func spawn<Message: Sendable>(
        of messageType: Message.Type = Message.self, options: SpawnOptions = SpawnOptions(),
        body: @escaping @Sendable (Inbox<Message>) async throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        if options.supervisor != nil {
            throw .unsupportedSpawnOptions("a sequential actor is not restarted: it takes no supervisor")
        }
        if options.isBounded {
            throw .unsupportedSpawnOptions("a sequential actor's mailbox grows: mailboxKind .bounded cannot be used")
        }
        if options.pool != nil {
            throw .unsupportedSpawnOptions("a pool's routees are event, closure or value actors, not sequential bodies")
        }
        return try place(options.placement, name: options.name) { (system, name) throws(ActorSystemError) in
            try system.spawnSequentialCell(name: name, mailboxCapacity: options.mailboxCapacity, body: body)
        }
    }

    /// A sequential actor's cell on this system, registered and scheduled.
    func spawnSequentialCell<Message: Sendable>(
        name: String?, mailboxCapacity: Int, body: @escaping @Sendable (Inbox<Message>) async throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        try refuseOnDeterministicScheduler("spawn of a sequential body")
        // Reclaimable: a parked body gives an idle ring back when a walk asks (SequentialActorCell).
        let shape = try mailboxShape(capacity: mailboxCapacity, for: Message.self, reclaimable: true)
        let id = nextActorID()
        let cell = SequentialActorCell<Message>(id: id, name: name, system: self,
                                                mailbox: shape, body: body)
        try reserveEagerRing(of: cell, for: Message.self)
        try register(cell, named: name)
        cell.scheduleSelf()  // the first turn starts the body
        return ActorRef(target: .sequential(cell))
    }
}
