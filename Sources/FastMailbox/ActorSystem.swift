// ActorSystem: owns the scheduler, the registry of live actors, dead letters and the
// counters that make shutdown's accounting exact.
//
// Accounting: every message accepted by a mailbox ends in exactly one of
//   delivered     handed to a behaviour (per-cell counters, summed),
//   dead-lettered published to `deadLetters`,
//   left          still queued when shutdown gave up waiting.
//   sent          accepted by the runtime: over all cells, taken out plus still queued;
//                 plus messages dead-lettered without being queued; plus watch messages
//                 the runtime sent.
// So delivered + deadLettered + left == sent is a check, not an identity: a message
// stranded in a mailbox, or taken out and dropped, breaks it. A cell's counts move into
// the retired totals when it leaves the registry (cellTerminated). A cell still running
// when shutdown empties the registry is retired then, and its later changes when it
// leaves. So metrics after a shutdown agree with the report.
//
// Shutdown: refuse spawns; close every mailbox (later tells become dead letters) and let
// each actor drain and stop; wait until all stopped or the timeout passed; stop the rest;
// shut down an owned scheduler without joining a worker stuck in a turn. Late work goes
// to each cell's runAfterShutdown, which dead-letters it. Then count what the running
// cells hold and clear the registry, so everything is freed once the user lets go.
// On a DeterministicScheduler, shutdown drives the turns on the calling thread until
// quiescent, and reads the deadline on the virtual clock.

import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import MNScheduler
import Synchronization

/// What ``ActorSystem/shutdown(timeout:)`` did.
public struct ShutdownReport: Sendable, Equatable, CustomStringConvertible {
    /// Messages handed to behaviours over the system's life.
    public var delivered: Int
    /// Messages that went to dead letters over the system's life.
    public var deadLettered: Int
    /// Messages still queued in actors that had not stopped when the timeout passed.
    public var left: Int
    /// Actors that had not stopped when the timeout passed.
    public var actorsNotStopped: Int
    /// Messages the runtime accepted for actors over the system's life: every tell (dead
    /// letters included) and every watch message it sent on your behalf. Nothing is lost
    /// exactly when `delivered + deadLettered + left == sent`.
    public var sent: Int
    /// Worker threads still inside a turn when the timeout passed (detached, not joined;
    /// 0 when the system does not own its scheduler).
    public var workersNotStopped: Int
    /// Names of the actors that had not stopped (at most 20).
    public var actorsNotStoppedNames: [String]

    /// Adds another report's figures (a dedicated actor's private system).
    mutating func add(_ other: ShutdownReport) {
        delivered += other.delivered
        deadLettered += other.deadLettered
        left += other.left
        actorsNotStopped += other.actorsNotStopped
        sent += other.sent
        workersNotStopped += other.workersNotStopped
        actorsNotStoppedNames = Array((actorsNotStoppedNames + other.actorsNotStoppedNames).prefix(20))
    }

    /// True when every accepted message is accounted for: `delivered + deadLettered + left == sent`.
    public var isBalanced: Bool { delivered + deadLettered + left == sent }

    public var description: String {
        var text = "sent \(sent): delivered \(delivered), dead-lettered \(deadLettered), left \(left) in \(actorsNotStopped) actors"
        if !actorsNotStoppedNames.isEmpty { text += " (\(actorsNotStoppedNames.joined(separator: ", ")))" }
        if workersNotStopped > 0 { text += "; \(workersNotStopped) workers still inside a turn" }
        return text
    }
}

/// The home of a set of actors: spawns them, runs them on an M:N `Scheduler`, keeps the
/// registry by name and the dead letters.
///
/// Thread-safety: every method may be called from any thread or task.
/// ``shutdown(timeout:)`` blocks the calling thread while it waits (from async code use
/// ``gracefulShutdown(timeout:)``, which never blocks a thread of Swift's cooperative pool);
/// called from an actor's turn it does not wait (see there).
///
/// Logging: ``logger`` receives supervisor decisions, dead letters (info, rate-limited:
/// a few lines per second, then a count), a warning for each unknown `MN_` environment
/// variable (once per process) and the shutdown report; nothing is logged per delivered
/// message.
public final class ActorSystem: Sendable {
    /// Default ring slots of an actor's mailbox: small, because actors number in the
    /// millions and an idle one should cost little; bursts beyond it overflow in order.
    public static let defaultMailboxCapacity = 32

    /// The system's name (used in descriptions).
    public let name: String
    /// The scheduler whose workers run every actor turn.
    public let scheduler: Scheduler
    /// Undeliverable messages: a counter and a subscribable stream.
    public let deadLetters = DeadLetterOffice()
    /// Decides about failures of top-level actors (and children of actors that don't say).
    public let defaultSupervisor: SupervisorStrategy

    /// Where the runtime logs (supervisor decisions, dead letters, shutdown), and the base of
    /// every actor's ``ActorContext/log``. Its `actor/system` metadata is the system's name.
    public let logger: Logger
    /// Relaxed counters behind ``metrics``, never touched per delivered message.
    let counters = SystemCounters()
    /// The rate-limited log of dead letters.
    let deadLetterLog = DeadLetterLog()

    private let ownsScheduler: Bool
    private let shuttingDown = Atomic<Bool>(false)
    /// Delivered counts of cells that already left the registry.
    private let retiredDelivered = Atomic<Int>(0)
    /// Accepted counts (taken out + still queued) of cells that already left the registry.
    private let retiredAccepted = Atomic<Int>(0)
    /// Dead letters of messages that had been accepted into a mailbox (already part of its
    /// cell's accepted count).
    let queuedDeadLetters = Atomic<Int>(0)
    /// Dead letters of messages never queued (refused tells, late replies, a late arrival
    /// at a cell that left). Each is also a message sent that no mailbox counts.
    let unqueuedDeadLetters = Atomic<Int>(0)
    /// Watch messages the runtime handed to a behaviour: the other part of `sent` that no
    /// mailbox counts.
    let runtimeSent = Atomic<Int>(0)
    /// Messages taken out of mailboxes and held by their actors (stash, unstashed): part
    /// of `left` at shutdown.
    let heldBack = Atomic<Int>(0)
    /// The timeouts of pending asks.
    let askTimer: AskTimer
    /// Asks waiting for a reply: while > 0, dead letters are searched for their promises.
    let outstandingAsks = Atomic<Int>(0)
    /// Taken by spawn and by every actor's last turn.
    let registry = FutexLock<Registry>(Registry())
    /// The automatic idle-mailbox walk's timer (ActorSystem+Reclaim), nil when off.
    let reclaimTimer = Lock<(any DispatchSourceTimer)?>(nil)
    /// Held by a walk: one at a time, since the walker's snapshot word is walker-only.
    let reclaimWalk = Lock<Int>(0)
    private let shutdownResult = Lock<ShutdownReport?>(nil)
    /// Private one-worker systems of dedicated actors (``SpawnOptions/Placement/dedicatedThread``),
    /// shut down with this one.
    let dedicatedSystems = Lock<[ActorSystem]>([])
    /// The private system of main-thread actors, made on first use (ActorSystem+MainThread).
    let mainThreadSystemStorage = Lock<ActorSystem?>(nil)

    struct Registry {
        /// Live cells (registered, not yet terminated); see CellTable.
        let cells = CellTable()
        var names: [String: AnyActorCell] = [:]
        var singletons: [String: any Sendable] = [:]
        /// Pool names taken while the pool's routees are spawned.
        var reserved: Set<String> = []
        /// Set with the system's `shuttingDown`, in the same critical section: the
        /// idle-mailbox walk, which holds the registry and not the system, stops at it.
        var shuttingDown = false
        /// Cells shutdown took out of `cells` while they still ran, with the counts it
        /// retired then. When one leaves, only the change is retired. Keeps no cell alive.
        var stragglers: [ActorID: RetiredCounts] = [:]
    }

    /// A cell's counts as moved into the retired totals.
    struct RetiredCounts {
        var delivered: Int
        var accepted: Int
        var overflows: Int
    }

    /// Actor ids are process-wide so refs of different systems never compare equal.
    private static let nextID = Atomic<UInt64>(0)

    /// Creates a system with its own scheduler.
    /// - Parameters:
    ///   - name: used in descriptions and diagnostics.
    ///   - configuration: scheduler settings in code; environment variables
    ///     (`MN_WORKERS`, …) apply underneath them, as `SchedulerConfiguration` documents.
    ///   - defaultSupervisor: decides about failures of top-level actors.
    ///   - logger: where the runtime logs (see ``logger``); by default a logger labelled
    ///     `"fastmailbox"`, which goes wherever the process bootstrapped `LoggingSystem`.
    /// - Throws: `SchedulerConfigurationError` naming a bad variable, its value and the allowed range.
    public init(name: String = "fastmailbox",
                configuration: SchedulerConfiguration = SchedulerConfiguration(),
                defaultSupervisor: SupervisorStrategy = .default,
                logger: Logger = Logger(label: "fastmailbox")) throws(SchedulerConfigurationError) {
        self.name = name
        self.scheduler = try Scheduler(configuration: configuration)
        self.ownsScheduler = true
        self.defaultSupervisor = defaultSupervisor
        self.logger = ActorSystem.systemLogger(logger, name: name)
        self.askTimer = AskTimer(clock: scheduler.clock)
        UnknownVariableReporter.process.reportOnce(environment: ConfigurationVariable.processEnvironment(), to: self.logger)
        startIdleMailboxReclaim()
    }

    /// Creates a system on an existing scheduler (shared with other systems or executors;
    /// this system's shutdown then does not shut it down).
    public convenience init(name: String = "fastmailbox", scheduler: Scheduler,
                defaultSupervisor: SupervisorStrategy = .default,
                logger: Logger = Logger(label: "fastmailbox")) {
        self.init(name: name, scheduler: scheduler, ownsScheduler: false, defaultSupervisor: defaultSupervisor,
                  logger: logger)
    }

    /// A system on `scheduler` that shuts it down with itself when `ownsScheduler` (the
    /// private system of main-thread actors).
    package init(name: String, scheduler: Scheduler, ownsScheduler: Bool, defaultSupervisor: SupervisorStrategy,
         logger: Logger = Logger(label: "fastmailbox")) {
        self.name = name
        self.scheduler = scheduler
        self.ownsScheduler = ownsScheduler
        self.defaultSupervisor = defaultSupervisor
        self.logger = ActorSystem.systemLogger(logger, name: name)
        self.askTimer = AskTimer(clock: scheduler.clock)
        UnknownVariableReporter.process.reportOnce(environment: ConfigurationVariable.processEnvironment(), to: self.logger)
        startIdleMailboxReclaim()
    }

    deinit {
        reclaimTimer.withLock { $0?.cancel() }
    }

    /// Turns ``shutdown(timeout:)`` runs at most, per drain, on a deterministic scheduler.
    static let deterministicShutdownTurns = 1_000_000

    /// Sequential bodies and the dedicated-thread and main-thread placements need threads of their own.
    func refuseOnDeterministicScheduler(_ function: String) throws(ActorSystemError) {
        if scheduler.isDeterministic { throw .unsupportedOnDeterministicScheduler(function) }
    }

    private static func systemLogger(_ logger: Logger, name: String) -> Logger {
        var logger = logger
        logger[metadataKey: "actor/system"] = "\(name)"
        return logger
    }

    /// True once ``shutdown(timeout:)`` has begun.
    public var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    // MARK: spawning

    /// Spawns a top-level actor whose behaviour is an ``EventActor`` made by `factory`: now,
    /// and again for a fresh instance on every supervisor restart.
    ///
    /// The one spawn, with its siblings for the other kinds of behaviour (a closure, a value
    /// behaviour, a sequential body): `options` say the rest (``SpawnOptions``: name,
    /// mailbox, supervisor, placement, pool).
    /// - Thread-safety: any thread or task. The actor is registered when this returns.
    /// - Ordering: messages from one sender arrive in the order sent.
    /// - Cost: on the scheduler's workers, no thread; see ``defaultMailboxCapacity``.
    /// - Throws: ``ActorSystemError``: a taken name, a bad capacity or pool size, options
    ///   that cannot go together (``ActorSystemError/unsupportedSpawnOptions(_:)``), or the
    ///   system is shut down. Nothing is left running when it throws.
    @inlinable @inline(__always) @discardableResult
    public func spawn<A: EventActor>(
        options: SpawnOptions = SpawnOptions(), _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable so the turn is specialised for A here (ActorCellBase, "Specialised turns").
        if _fastPath(options.isPlain) {
            return try spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 mailboxPass: ActorCell<A>.specializedMailboxPass, factory: factory)
        }
        return try spawnArranged(options, factory)
    }

    /// The event-actor spawn with a pool or a placement off the workers. Out of line, so
    /// the plain spawn above stays small enough to inline.
    @inlinable @inline(never)
    func spawnArranged<A: EventActor>(
        _ options: SpawnOptions, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        try spawnArranged(options) { (system, name) throws(ActorSystemError) in
            try system.spawnCell(name: name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 mailboxPass: ActorCell<A>.specializedMailboxPass, factory: factory)
        }
    }

    /// Spawns a top-level actor whose behaviour is a closure, called for each message.
    ///
    /// Name the message type once, with `of:` or with the ref's type, and the closure's
    /// parameter types are inferred:
    /// ```swift
    /// let printer = try system.spawn(of: String.self) { line, context in print(line) }
    /// let adder: ActorRef<Int> = try system.spawn { n, context in total.add(n) }
    /// ```
    /// (Without either, the compiler cannot tell the message type.) The closure holds no
    /// state of its own, so a restart calls it again as it is. Same guarantees and errors
    /// as ``spawn(options:_:)-(_,()->A)``.
    @inlinable @inline(__always) @discardableResult
    public func spawn<Message: Sendable>(
        of messageType: Message.Type = Message.self, options: SpawnOptions = SpawnOptions(),
        receive: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        // The closure kept in the cell (ClosureActorCell): no factory, no object around it.
        if _fastPath(options.isPlain) {
            return try spawnClosureCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                        boundedMailbox: options.isBounded, parent: nil,
                                        supervisor: options.supervisor, receive: consume receive)
        }
        return try spawnArranged(options, receive: receive)
    }

    /// The closure spawn with a pool or a placement off the workers. Out of line, so the
    /// plain spawn above stays small enough to inline.
    @inlinable @inline(never)
    func spawnArranged<Message: Sendable>(
        _ options: SpawnOptions, receive: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        try spawnArranged(options) { (system, name) throws(ActorSystemError) in
            try system.spawnClosureCell(name: name, mailboxCapacity: options.mailboxCapacity,
                                        boundedMailbox: options.isBounded, parent: nil,
                                        supervisor: options.supervisor, receive: receive)
        }
    }

    /// Spawns a top-level actor whose behaviour is a value (``ActorBehavior``): `behavior`
    /// is stored in the actor and mutated in place by each message; a restart starts again
    /// from a copy of it. Same guarantees and errors as ``spawn(options:_:)-(_,()->A)``.
    @inlinable @inline(__always) @discardableResult
    public func spawn<B: ActorBehavior>(
        options: SpawnOptions = SpawnOptions(), _ behavior: B
    ) throws(ActorSystemError) -> ActorRef<B.Message> {
        if _fastPath(options.isPlain) {
            return try spawnValueCell(name: options.name, options: options, parent: nil, behavior: behavior)
        }
        return try spawnArranged(options, behavior: behavior)
    }

    /// The value-behaviour spawn with a pool or a placement off the workers. Out of line,
    /// so the plain spawn above stays small enough to inline.
    @inlinable @inline(never)
    func spawnArranged<B: ActorBehavior>(_ options: SpawnOptions, behavior: B) throws(ActorSystemError) -> ActorRef<B.Message> {
        try spawnArranged(options) { (system, name) throws(ActorSystemError) in
            try system.spawnValueCell(name: name, options: options, parent: nil, behavior: behavior)
        }
    }

    @usableFromInline func nextActorID() -> ActorID {
        ActorID(rawValue: ActorSystem.nextID.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// A spawn with a pool or a placement off the workers: `make` spawns one actor on the
    /// given system under the given name (in the caller's specialised code); this decides
    /// which system, how many, and puts a pool's router in front.
    @usableFromInline
    func spawnArranged<Message: Sendable>(
        _ options: SpawnOptions, make: (ActorSystem, String?) throws(ActorSystemError) -> ActorRef<Message>
    ) throws(ActorSystemError) -> ActorRef<Message> {
        guard let pool = options.pool else { return try place(options.placement, name: options.name, make) }
        if options.isBounded {
            throw .unsupportedSpawnOptions("a pool's routees have growing mailboxes: mailboxKind .bounded cannot be used with pool")
        }
        return try spawnPool(name: options.name, size: pool.size, routing: pool.routing) { (routeeName) throws(ActorSystemError) in
            try place(options.placement, name: routeeName, make)
        }
    }

    /// Spawns one actor with `make` on the system that runs `placement`: this one, a new
    /// dedicated one-worker system, or the main-thread system.
    @usableFromInline
    func place<Message: Sendable>(
        _ placement: SpawnOptions.Placement, name: String?,
        _ make: (ActorSystem, String?) throws(ActorSystemError) -> ActorRef<Message>
    ) throws(ActorSystemError) -> ActorRef<Message> {
        switch placement {
        case .workers: return try make(self, name)
        case .dedicatedThread: return try make(dedicatedSystem(name: name), name)
        case .mainThread: return try make(mainThreadSystemForSpawn(), name)
        }
    }

    /// `spawnCell` for a value behaviour (ValueActorCell). Inlinable, as spawnCell.
    @inlinable
    func spawnValueCell<B: ActorBehavior>(
        name: String?, options: SpawnOptions, parent: AnyActorCell?, behavior: B
    ) throws(ActorSystemError) -> ActorRef<B.Message> {
        let shape = try mailboxShape(capacity: options.mailboxCapacity, for: B.Message.self,
                                     reclaimable: !options.isBounded)
        let cell = ValueActorCell<B>(id: nextActorID(), name: name, system: self, parent: parent,
                                     supervisor: options.supervisor, mailbox: shape,
                                     mailboxPass: ValueActorCell<B>.specializedMailboxPass,
                                     bounded: options.isBounded, behavior: behavior)
        try reserveEagerRing(of: cell, for: B.Message.self)
        try enroll(cell, named: name, parent: parent)
        return ActorRef(cell: cell)
    }

    /// Inlinable, like its callers: specialised where `spawn` is called, so the cell's
    /// generic class metadata comes from that site's cache instead of a look-up in the
    /// runtime's metadata table on every spawn. What does not depend on `A` is `enroll`'s.
    /// `supervisor` nil: the system's default (the cell then keeps none, and the spawn
    /// neither retains nor compares one). Closure actors: `spawnClosureCell`.
    @inlinable
    func spawnCell<A: EventActor>(
        name: String?, mailboxCapacity: Int, boundedMailbox: Bool = false, parent: AnyActorCell?,
        supervisor: SupervisorStrategy?, mailboxPass: ActorCellBase<A.Message>.MailboxPass? = nil,
        factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // A bounded mailbox keeps its ring: a send meeting a ring being given back (sealed:
        // "full") would be refused or made to wait as if the mailbox were full.
        let shape = try mailboxShape(capacity: mailboxCapacity, for: A.Message.self, reclaimable: !boundedMailbox)
        let cell = ActorCell<A>(id: nextActorID(), name: name, system: self, parent: parent,
                                supervisor: supervisor, mailbox: shape, mailboxPass: mailboxPass,
                                bounded: boundedMailbox, instance: factory(), factory: factory)
        // The cell is its mailbox queue, so an eager ring is reserved once the cell exists:
        // a failure there (out of memory) drops the instance `factory` just made, unstarted.
        try reserveEagerRing(of: cell, for: A.Message.self)
        try enroll(cell, named: name, parent: parent)
        return ActorRef(cell: cell)  // the case directly: no existential, no witness-table look-up
    }

    /// `spawnCell` for a closure actor: its cell holds the closure (ClosureActorCell), which
    /// serves again after a restart. Born running, it gets no turn until it has work
    /// (`enroll`). Inlinable, as spawnCell.
    @inlinable
    func spawnClosureCell<Message: Sendable>(
        name: String?, mailboxCapacity: Int, boundedMailbox: Bool, parent: AnyActorCell?,
        supervisor: SupervisorStrategy?, receive: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        let shape = try mailboxShape(capacity: mailboxCapacity, for: Message.self, reclaimable: !boundedMailbox)
        let cell = ClosureActorCell<Message>(id: nextActorID(), name: name, system: self, parent: parent,
                                             supervisor: supervisor, mailbox: shape,
                                             mailboxPass: ClosureActorCell<Message>.specializedMailboxPass,
                                             bounded: boundedMailbox, body: consume receive)
        try reserveEagerRing(of: cell, for: Message.self)
        try enroll(cell, named: name, parent: parent, bornRunning: true)
        return ActorRef(cell: cell)
    }

    /// Registers a fresh cell, makes it its parent's child, and schedules its first turn,
    /// which runs preStart. A `bornRunning` cell has an empty preStart: it starts running
    /// here, before any other thread can see it, and its first message schedules its
    /// first turn.
    @usableFromInline
    func enroll(_ cell: AnyActorCell, named name: String?, parent: AnyActorCell?,
                bornRunning: Bool = false) throws(ActorSystemError) {
        if bornRunning { cell.startWithoutTurn() }  // still private to this thread (C2 holds)
        try register(cell, named: name)
        if let parent { parent.children[cell.id] = cell }  // spawn from a context runs in the parent's turn
        if !bornRunning { cell.scheduleSelf() }
    }

    /// Rings of at least this many slots are allocated at spawn, so running out of memory
    /// is a thrown error there rather than a trap at the first tell. Smaller ones stay lazy.
    @inlinable static var eagerRingCapacity: Int { 4_096 }  // computed: a constant in inlined code

    /// The validated shape of an actor's mailbox of `Message`s. The cell is its own mailbox
    /// queue, made with this shape; the spawn then calls `reserveEagerRing`.
    @inlinable
    func mailboxShape<Message: Sendable>(capacity: Int, for: Message.Type,
                                         reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        try queueShape(capacity: capacity, itemBytes: MessageEncoding<Message>.itemBytes, reclaimable: reclaimable)
    }

    /// The shape of a mailbox of `itemBytes`-byte items. `reclaimable`: an idle actor may
    /// give its ring back, unless the ring is allocated at spawn (eagerRingCapacity).
    /// Inlinable, so a constant capacity is checked at compile time.
    @inlinable
    func queueShape(capacity: Int, itemBytes: Int, reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        do {
            return try MPSCQueue.Shape(capacity: capacity, itemBytes: itemBytes,
                                       reclaimable: reclaimable && capacity < ActorSystem.eagerRingCapacity)
        } catch {
            throw .invalidMailboxCapacity(capacity)
        }
    }

    /// Allocates a fresh cell's ring at spawn when its capacity is eagerRingCapacity or
    /// more. `queue` is the cell itself: forming a Mailbox here would retain it.
    @inlinable
    func reserveEagerRing<Message: Sendable>(of queue: MPSCQueue, for: Message.Type) throws(ActorSystemError) {
        if _slowPath(queue.capacity >= ActorSystem.eagerRingCapacity) {
            try reserveRing(of: Mailbox<Message>(queue: queue))
        }
    }

    /// Allocates `mailbox`'s ring now, recording `Message` (Mailbox.swift).
    @usableFromInline
    func reserveRing<Message: Sendable>(of mailbox: Mailbox<Message>) throws(ActorSystemError) {
        do { try MessageEncoding<Message>.reserveRing(of: mailbox.queue) } catch {
            throw .mailboxAllocationFailed(capacity: error.capacity, bytes: error.bytes)
        }
    }

    /// Enters `cell` in the registry, and its name if given. Inlined into its two callers.
    @inline(__always)
    func register(_ cell: AnyActorCell, named name: String?) throws(ActorSystemError) {
        let error: ActorSystemError? = registry.withLock { registry in
            if isShuttingDown { return .shutDown }
            if let name {
                if registry.names[name] != nil || registry.reserved.contains(name) { return .duplicateName(name) }
                registry.names[name] = cell
                cell.holdsRegisteredName = true
            }
            registry.cells.insert(cell)
            return nil
        }
        if let error { throw error }
    }

    /// Called by a cell's last turn.
    func cellTerminated(_ cell: AnyActorCell) {
        registry.withLock { registry in
            // Under the lock, so metrics and reports count each cell exactly once. A
            // drained cell's accepted count is what was taken out; a message still being
            // inserted is counted as sent when it is dead-lettered.
            let now = RetiredCounts(delivered: cell.deliveredCount, accepted: cell.retiredAcceptedCount,
                                    overflows: cell.overflowCount)
            if registry.cells.remove(cell) {
                retire(now)
            } else if let before = registry.stragglers.removeValue(forKey: cell.id) {
                // Shutdown retired this straggler's counts then: add the change since
                // (wrapping: it may be negative).
                retire(RetiredCounts(delivered: now.delivered &- before.delivered,
                                     accepted: now.accepted &- before.accepted,
                                     overflows: now.overflows &- before.overflows))
            } else {
                return
            }
            if cell.holdsRegisteredName, registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
    }

    /// Adds a cell's counts to the retired totals (under the registry lock).
    private func retire(_ counts: RetiredCounts) {
        retiredDelivered.wrappingAdd(counts.delivered, ordering: .relaxed)
        retiredAccepted.wrappingAdd(counts.accepted, ordering: .relaxed)
        counters.retiredOverflows.wrappingAdd(counts.overflows, ordering: .relaxed)
    }

    /// Shutdown empties the registry: the counts of every cell still in it (stragglers,
    /// still running) are retired as they are now, and the straggler is remembered so
    /// that its leaving retires only the change.
    private func retireStragglers(_ registry: inout Registry) {
        registry.cells.forEach { cell in
            let figures = cell.reportFigures
            let counts = RetiredCounts(delivered: figures.delivered, accepted: figures.accepted,
                                       overflows: cell.overflowCount)
            retire(counts)
            registry.stragglers[cell.id] = counts
        }
        registry.cells.removeAll()
    }

    /// Takes `name` for a pool before its routees exist, so a taken name fails before
    /// anything is spawned.
    func reserveName(_ name: String) throws(ActorSystemError) {
        let error: ActorSystemError? = registry.withLock { registry in
            if isShuttingDown { return .shutDown }
            if registry.names[name] != nil || registry.reserved.contains(name) { return .duplicateName(name) }
            registry.reserved.insert(name)
            return nil
        }
        if let error { throw error }
    }

    func unreserveName(_ name: String) {
        registry.withLock { _ = $0.reserved.remove(name) }
    }

    /// Registers a pool's router under its reserved name. It is not in `cells`: the routees
    /// are the live actors. After a shutdown began the name is dropped.
    func fillReservedName(_ name: String, with router: AnyActorCell) {
        registry.withLock { registry in
            guard registry.reserved.remove(name) != nil, !isShuttingDown else { return }
            registry.names[name] = router
            router.holdsRegisteredName = true
        }
    }

    /// Frees `name` at once, so a restarting parent's new children may reuse it.
    func releaseName(of cell: AnyActorCell) {
        // Set before the cell could run, never cleared: an unnamed actor takes no lock here.
        guard cell.holdsRegisteredName else { return }
        registry.withLock { registry in
            if cell.holdsRegisteredName, registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
    }

    // MARK: dead letters

    /// Publishes a dead letter. `wasQueued`: the message had been accepted into a mailbox
    /// and is part of its count; otherwise it is counted here as sent. A message carrying
    /// the reply-to of a pending `ask` fails that ask at once.
    func publishDeadLetter<M: Sendable>(_ message: M, recipient: ActorID, recipientName: String,
                                        reason: DeadLetterReason? = nil, wasQueued: Bool) {
        if wasQueued {
            queuedDeadLetters.wrappingAdd(1, ordering: .relaxed)
        } else {
            unqueuedDeadLetters.wrappingAdd(1, ordering: .relaxed)
        }
        let letter = DeadLetter(message: message, recipient: recipient, recipientName: recipientName,
                                reason: reason ?? (isShuttingDown ? .systemShutDown : .recipientStopped))
        deadLetters.publish(letter)
        if logger.logLevel <= .info { deadLetterLog.record(letter, now: scheduler.clock.nanoseconds(), logger: logger) }
        if outstandingAsks.load(ordering: .relaxed) > 0 { failPendingAsks(in: message, depth: 0) }
    }

    /// `shutdown` from inside a turn: the waiting runs on a thread of its own, and the
    /// caller gets a snapshot at once.
    private func startShutdownFromTurn(timeout: Duration) -> ShutdownReport {
        registry.withLock { registry in registry.shuttingDown = true; shuttingDown.store(true, ordering: .releasing) }  // no spawn from here on
        DispatchQueue(label: "fastmailbox.shutdown").async { _ = self.shutdown(timeout: timeout) }
        return accountingReport(workersNotStopped: 0)
    }

    /// A shutdown report from the counters now, with the cells still registered as
    /// `actorsNotStopped`.
    private func accountingReport(workersNotStopped: Int) -> ShutdownReport {
        // Why `delivered + deadLettered + left == sent` is exact while tells race the reads:
        // 1. Cells and retired totals in one pass under the registry lock, which a leaving
        //    cell takes: each cell counts once. A cell's queued count is read once, for
        //    `left` and `sent`, so a tell landing meanwhile is on both sides or neither.
        // 2. `runtimeSent` and `queuedDeadLetters` change only in turns of running cells.
        // 3. `unqueuedDeadLetters` is read once and added to both sides. A racing tell
        //    (refused, or landing in a cell that left) changes only this figure.
        // A straggler whose turn ends during the reads moves messages from `left` to dead
        // letters between 1 and 2; its figures settle when the turn ends.
        // ShutdownAccountingTests runs a refused tell between each two reads.
        let (cells, delivered, accepted, left) = registry.withLock { registry in
            var delivered = retiredDelivered.load(ordering: .relaxed)
            var accepted = retiredAccepted.load(ordering: .relaxed)
            var left = heldBack.load(ordering: .relaxed)
            registry.cells.forEach { cell in
                let figures = cell.reportFigures
                delivered &+= figures.delivered
                accepted &+= figures.accepted
                left &+= figures.left
            }
            return (registry.cells.values, delivered, accepted, left)
        }
        let runtime = readForReport(runtimeSent)
        let queuedDead = readForReport(queuedDeadLetters)
        let unqueuedDead = readForReport(unqueuedDeadLetters)
        #if DEBUG
        ShutdownReportTestHook.betweenReads(of: self)
        #endif
        return ShutdownReport(delivered: delivered, deadLettered: queuedDead &+ unqueuedDead, left: left,
                              actorsNotStopped: cells.count, sent: accepted &+ runtime &+ unqueuedDead,
                              workersNotStopped: workersNotStopped,
                              actorsNotStoppedNames: cells.prefix(20).map(\.name).sorted())
    }

    /// One of `accountingReport`'s reads: `counter`, with the debug test hook run first.
    private func readForReport(_ counter: borrowing Atomic<Int>) -> Int {
        #if DEBUG
        ShutdownReportTestHook.betweenReads(of: self)
        #endif
        return counter.load(ordering: .relaxed)
    }

    /// Fails the asks whose reply-to refs `value` carries (a few levels deep).
    private func failPendingAsks(in value: Any, depth: Int) {
        if let carrier = value as? any ReplyRefCarrier {
            carrier.pendingAsk?.failBecauseRequestDeadLettered()
            return
        }
        guard depth < 4 else { return }
        for child in Mirror(reflecting: value).children { failPendingAsks(in: child.value, depth: depth + 1) }
    }

    // MARK: lookup

    /// The live actor named `name`, if it handles `Message`.
    public func lookup<Message: Sendable>(_ name: String, as type: Message.Type = Message.self) -> ActorRef<Message>? {
        guard let recipient = registry.withLock({ $0.names[name] }) as? any MessageRecipient<Message> else { return nil }
        return ActorRef(recipient)
    }

    /// Runs `body` with the registry's singleton table locked (see `singleton(key:_:)`).
    func withSingletons<R>(_ body: (inout [String: any Sendable]) throws -> R) rethrows -> R {
        try registry.withLock { try body(&$0.singletons) }
    }

    // MARK: statistics and shutdown

    /// Actors not yet stopped: the registered cells, plus shutdown's stragglers until each
    /// leaves.
    private static func liveActors(_ registry: borrowing Registry) -> Int {
        registry.cells.count + registry.stragglers.count
    }

    /// Live actors, delivered messages and mailbox overflows, in one pass (``metrics``).
    func registryTotals() -> (live: Int, delivered: Int, overflows: Int) {
        registry.withLock { registry in
            var delivered = retiredDelivered.load(ordering: .relaxed)
            var overflows = counters.retiredOverflows.load(ordering: .relaxed)
            registry.cells.forEach { cell in
                delivered += cell.deliveredCount
                overflows += cell.overflowCount
            }
            return (ActorSystem.liveActors(registry), delivered, overflows)
        }
    }

    /// Messages accepted so far (see `ShutdownReport.sent`; a snapshot).
    var acceptedTotal: Int {
        registry.withLock { registry in
            var accepted = retiredAccepted.load(ordering: .relaxed)
            registry.cells.forEach { accepted += $0.acceptedCount }
            return accepted
        } + runtimeSent.load(ordering: .relaxed) + unqueuedDeadLetters.load(ordering: .relaxed)
    }

    /// Shuts the system down gracefully and reports the accounting.
    ///
    /// Refuses new spawns and closes every mailbox: later tells go to dead letters with
    /// reason `.systemShutDown`. Every actor handles what it already holds and stops; the
    /// call waits up to `timeout` for that, then tells the rest to stop at once. An owned
    /// scheduler is shut down: workers that finish their turn within a 100 ms grace are
    /// joined, and a worker stuck in a turn is reported in
    /// ``ShutdownReport/workersNotStopped``, its actor's messages in ``ShutdownReport/left``
    /// (they become dead letters when that turn ends). So the call returns within about
    /// `timeout` + 100 ms, whatever the actors do. Later work is dead-lettered.
    ///
    /// Idempotent: later calls return the first report. Any `Duration` is accepted: a huge
    /// one waits as long as it takes, a negative one means zero. It blocks the calling
    /// thread; from async code use ``gracefulShutdown(timeout:)``. The report is logged:
    /// info when everything stopped and balanced, warning otherwise.
    ///
    /// On a `DeterministicScheduler` shutdown drives the remaining turns on the calling
    /// thread and reads the timeout on the virtual clock. Called from one of its turns, or
    /// while another thread drives it, it stops what it can and reports the rest in
    /// ``ShutdownReport/actorsNotStopped``; it never traps.
    ///
    /// Called from a turn of one of this system's actors, it cannot wait for its own turn.
    /// It starts the shutdown on a thread of its own and returns a snapshot at once, with
    /// every live actor, the caller included, in ``ShutdownReport/actorsNotStopped``. A
    /// later call from outside waits and returns the final report.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) -> ShutdownReport {
        if scheduler.isCurrentThreadWorker { return startShutdownFromTurn(timeout: timeout) }
        return shutdownResult.withLock { result in
            if let result { return result }
            registry.withLock { registry in registry.shuttingDown = true; shuttingDown.store(true, ordering: .releasing) }
            reclaimTimer.withLock { $0?.cancel(); $0 = nil }
            let dedicated = dedicatedSystems.withLock { systems in defer { systems = [] }; return systems }
            let cells = registry.withLock { $0.cells.values }
            for cell in cells {
                cell.closeMailbox()
                cell.sendSystem(.stop(.afterDrainingMailbox, .systemShutDown))
            }
            let clock = scheduler.clock
            let deadline = clock.deadline(after: timeout)
            let engine = scheduler.deterministicEngine
            if let engine {
            // Nobody else runs the turns: run them here, unless called from one of them or
            // while another thread drives (then the stragglers are reported).
                _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns)
            } else {
                while registry.withLock({ !$0.cells.isEmpty }), monotonicNanoseconds() < deadline {
                    usleep(200)
                }
            }
            // Stop what did not stop in time (a sequential actor's task is cancelled).
            let stuck = registry.withLock { $0.cells.values }
            for cell in stuck { cell.stopImmediately() }
            if let engine, !stuck.isEmpty { _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns) }
            var workersNotStopped = 0
            if ownsScheduler {
            // The rest of the timeout plus a short grace for turns about to end; a worker
            // still inside a turn after that is detached, never joined.
                let now = clock.nanoseconds()
                let remaining = deadline > now ? Int64(clamping: deadline - now) : 0
                scheduler.shutdown(timeout: .nanoseconds(remaining) + .milliseconds(100))
                workersNotStopped = scheduler.workersStillRunning
            }
        // Cells the scheduler handed back have dead-lettered their work; the cells still
        // registered are running (a stuck turn, a body that ignores its stop).
            deadLetters.finishSubscribers()
            deadLetterLog.flush(logger: logger)
            var report = accountingReport(workersNotStopped: workersNotStopped)
        // Dedicated actors' private systems: same deadline, figures added.
            for system in dedicated {
                let now = clock.nanoseconds()
                let part = system.shutdown(timeout: .nanoseconds(deadline > now ? Int64(clamping: deadline - now) : 0))
                report.add(part)
            }
        // Break the cycles system → registry → cells → system. A straggler stays alive
        // until its turn ends (CellTable T4), then dead-letters what it holds. Counts are
        // retired first, so metrics keep agreeing with the report.
            registry.withLock { registry in
                retireStragglers(&registry)
                registry.names = [:]
                registry.singletons = [:]
            }
            if report.isBalanced && report.actorsNotStopped == 0 && workersNotStopped == 0 {
                logger.debug("actor system shut down", metadata: ["shutdown/report": "\(report)"])
            } else {
                logger.warning("actor system shut down with work left", metadata: ["shutdown/report": "\(report)"])
            }
            result = report
            return report
        }
    }
}

/// A message field that may be the reply-to of a pending ask (see publishDeadLetter).
protocol ReplyRefCarrier {
    var pendingAsk: (any AskFailing)? { get }
}

extension ActorRef: ReplyRefCarrier {}

#if DEBUG
/// Debug builds only: runs an action between each two of a shutdown report's reads of the
/// counters, for one system.
enum ShutdownReportTestHook {
    private static let point = SystemHookPoint()

    /// `action` runs between each two reads of `system`'s next reports, until `disarm()`.
    static func arm(for system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func betweenReads(of system: ActorSystem) { point.fire(for: system) }
}
#endif
