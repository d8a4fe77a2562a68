import Logging
import MNScheduler

/// What an actor can do while it handles a message: reply, spawn, stop, watch, change
/// behaviour, stash.
///
/// Valid only during the call it was passed to, on that thread (not `Sendable`): hand
/// out ``myself``. Debug builds assert on a use outside the turn (a spawn then throws
/// ``ActorSystemError/contextUsedOutsideTurn(_:)``). ``myself``, ``id``, ``name`` and
/// ``system`` may be read anywhere.
public struct ActorContext<Message: Sendable> {
    /// The cell, unretained: the turn keeps it alive.
    @usableFromInline let unmanagedCell: Unmanaged<ActorCellBase<Message>>
    @usableFromInline var cell: ActorCellBase<Message> { unmanagedCell.takeUnretainedValue() }

    @inlinable init(cell: ActorCellBase<Message>) { self.unmanagedCell = .passUnretained(cell) }

    /// A reference to this actor, to hand to others.
    @inlinable public var myself: ActorRef<Message> { ActorRef(cell: cell) }
    /// This actor's identity.
    public var id: ActorID { cell.id }
    /// This actor's name.
    public var name: String { cell.name }
    /// The system the actor lives in.
    public var system: ActorSystem { cell.system }
    /// The system's ``ActorSystem/logger`` with `actor/id` and `actor/name` metadata.
    public var log: Logger { cell.checkInTurn("log") ? cell.logger : cell.system.logger }
    /// IDs of the live children (as far as this actor has been told).
    public var children: [ActorID] { cell.checkInTurn("children") ? Array(cell.children.keys).sorted() : [] }

    // MARK: spawning

    /// Spawns a child whose behaviour is an ``EventActor`` made by `factory` (again on each
    /// restart). It stops with this actor; its failures are decided by `options.supervisor`,
    /// else ``EventActor/supervisorStrategy``. Children run on the workers (``SpawnOptions``).
    @inlinable @discardableResult
    public func spawn<A: EventActor>(
        options: SpawnOptions = .defaults, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        try checkChildSpawn(options)
        return try cell.system.spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                         boundedMailbox: options.isBounded, parent: cell,
                                         supervisor: options.supervisor ?? cell.childSupervisor,
                                         behavior: EventActorCellBehavior(factory: factory))
    }

    /// Spawns a child whose behaviour is a closure; otherwise as ``spawn(options:_:)-(_,()->A)``.
    @inlinable @discardableResult
    public func spawn<M: Sendable>(
        of messageType: M.Type = M.self, options: SpawnOptions = .defaults,
        receive: __owned @escaping @Sendable (M, ActorContext<M>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<M> {
        try checkChildSpawn(options)
        return try cell.system.spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                         boundedMailbox: options.isBounded, parent: cell,
                                         supervisor: options.supervisor ?? cell.childSupervisor,
                                         behavior: ClosureCellBehavior(consume receive))
    }

    /// Spawns a child whose behaviour is a value (``ActorBehavior``); otherwise as
    /// ``spawn(options:_:)-(_,()->A)``.
    @inlinable @discardableResult
    public func spawn<B: ActorBehavior>(
        options: SpawnOptions = .defaults, _ behavior: B
    ) throws(ActorSystemError) -> ActorRef<B.Message> {
        try checkChildSpawn(options)
        return try cell.system.spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                         boundedMailbox: options.isBounded, parent: cell,
                                         supervisor: options.supervisor ?? cell.childSupervisor,
                                         behavior: ValueCellBehavior(behavior))
    }

    /// Outside the turn, or with options a child cannot have.
    @inlinable
    func checkChildSpawn(_ options: SpawnOptions) throws(ActorSystemError) {
        guard cell.checkInTurn("spawn") else { throw .contextUsedOutsideTurn("spawn") }
        if _slowPath(!options.isPlain) {
            throw .unsupportedSpawnOptions(options.pool != nil
                ? "a child cannot be a pool: spawn the pool from the system"
                : "a child runs on its system's workers: spawn actors with placement .\(options.placement) from the system")
        }
    }

    // MARK: lifecycle

    /// Stops this actor once the current message or hook returns; queued messages become
    /// dead letters.
    public func stop() {
        guard cell.checkInTurn("stop") else { return }
        cell.advance(.stopFromInside, .stopped)  // kept behind a pending failure (ActorLifecycle)
    }

    /// Stops another actor (typically a child).
    public func stop<M>(_ ref: ActorRef<M>, _ mode: StopMode = .immediately) {
        if ref.id == cell.id { stop() } else { ref.stop(mode) }
    }

    /// Watches `ref`: ``EventActor/receiveSignal(_:context:)`` gets `.terminated` when it
    /// stops (at once if it already has).
    public func watch<M>(_ ref: ActorRef<M>) {
        guard cell.checkInTurn("watch") else { return }
        guard let target = ref.identity.watchableCell, ref.id != cell.id else { return }
        cell.watching.insert(ref.id)
        target.sendSystem(.watch(cell))
    }

    /// Watches `ref`; receives `message` instead of a signal.
    public func watch<M>(_ ref: ActorRef<M>, with message: Message) {
        guard cell.checkInTurn("watch") else { return }
        cell.watchMessages[ref.id] = message
        watch(ref)
    }

    /// No `.terminated` arrives for `ref` afterwards.
    public func unwatch<M>(_ ref: ActorRef<M>) {
        guard cell.checkInTurn("unwatch") else { return }
        cell.watching.remove(ref.id)
        cell.watchMessages[ref.id] = nil
        ref.identity.watchableCell?.sendSystem(.unwatch(cell.id))
    }

    // MARK: behaviour changes

    /// From the next message on, handle messages with `behavior` (pushed on a stack).
    public func become(_ behavior: @escaping (Message, ActorContext<Message>) throws -> Void) {
        guard cell.checkInTurn("become") else { return }
        cell.becomeStack.append(behavior)
    }

    /// Return to the previous behaviour.
    public func unbecome() {
        guard cell.checkInTurn("unbecome") else { return }
        _ = cell.becomeStack.popLast()
    }

    /// Puts the message being handled aside until ``unstashAll()``; if the actor stops
    /// first, it becomes a dead letter. Stash a message at most once per handling.
    public func stash(_ message: Message) {
        guard cell.checkInTurn("stash") else { return }
        cell.stash(message)
    }

    /// Re-delivers the stashed messages, in order, ahead of the mailbox.
    public func unstashAll() {
        guard cell.checkInTurn("unstashAll") else { return }
        cell.unstashAll()
    }

    /// Messages currently stashed.
    public var stashCount: Int { cell.checkInTurn("stashCount") ? cell.stashed.count : 0 }
}
