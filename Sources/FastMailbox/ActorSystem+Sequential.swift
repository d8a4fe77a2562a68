// ActorSystem+Sequential: spawning thread-style actors (see SequentialActorCell).

import MNScheduler

extension ActorSystem {
    /// Spawns a sequential (thread-style) actor: `body` is its whole life, a loop over its
    /// ``Inbox`` (`for await message in inbox`, or `try await inbox.receive()`, selective
    /// and with a timeout). Name the message type with `of:` or with the ref's type.
    ///
    /// The body is a task on its placement's workers: it holds a worker only while it
    /// computes, no thread while it waits. Guarantees, refused options and errors:
    /// ``SpawnOptions``.
    ///
    /// - Lifecycle: the actor stops when the body returns (``TerminationReason/finished``),
    ///   on `ref.stop()` (receive throws ``ActorStoppedError``, the task is cancelled;
    ///   ``TerminationReason/stopped``), or when the body throws
    ///   (``TerminationReason/failed(_:)``). It is never restarted: catch inside the loop,
    ///   or watch it and spawn anew. Messages left in the inbox, and later tells, are dead
    ///   letters. `shutdown()` closes the inbox and lets a running body take what is queued
    ///   (an unstarted body never runs); a body that never returns is cancelled at the
    ///   timeout and reported in `actorsNotStopped`.
    @discardableResult
    public func spawn<Message: Sendable>(
        of messageType: Message.Type = Message.self, options: SpawnOptions = .defaults,
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
        // Reclaimable: a parked body gives an idle ring back when a walk asks.
        let shape = try mailboxShape(capacity: mailboxCapacity, for: Message.self, reclaimable: true)
        let id = nextActorID()
        let cell = SequentialActorCell<Message>(id: id, name: name, system: self,
                                                mailbox: shape, body: body)
        try reserveEagerRing(of: cell.queue, for: Message.self)
        try register(cell, named: name)
        cell.scheduleSelf()  // the first turn starts the body
        return ActorRef(target: .sequential(cell))
    }
}
