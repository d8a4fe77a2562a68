// ActorSystem — owns the scheduler, the registry of live actors, dead letters and the
// counters that make shutdown's accounting exact.
//
// Accounting: every message accepted by a mailbox ends in exactly one of
//   delivered     handed to a behaviour (per-cell counters, summed),
//   dead-lettered published to `deadLetters` (stopped recipient, late ask reply, shutdown),
//   left          still queued when shutdown gave up waiting (reported, then released).
//   sent          accepted by the runtime: Σ over cells (taken out of the mailbox + still
//                 in it) + messages dead-lettered without ever being queued (a tell to a
//                 closed mailbox, a late ask reply) + watch messages the runtime sent.
// So delivered + deadLettered + left == sent is a check, not an identity: a message that
// sits in a mailbox no one will drain, or is taken out and dropped, breaks it.
// A cell's counts move into the system's retired totals when it leaves the registry
// (cellTerminated), or, for a cell still running when shutdown empties the registry (a
// straggler), then, with what changes afterwards added when it does leave: statistics
// and metrics after a shutdown include every cell ever registered, and agree with the
// report. How the report reads these counters while tells race it: `accountingReport`.
// Shutdown: stop accepting spawns; close every mailbox (later tells → dead letters with
// reason .systemShutDown) and let each actor process what it already has, then stop;
// wait until every actor stopped or the timeout passed; tell the stragglers to stop; shut
// the scheduler down if this system owns it, waiting for busy workers only a short grace
// (a worker stuck inside a turn is detached, never joined); units still queued, and any
// work that arrives later, go to each cell's after-shutdown hook, which dead-letters it
// (AnyActorCell.runAfterShutdown); count what is left in the cells still running; clear
// the registry, so the system and its actors are freed once the user drops them.
// On a DeterministicScheduler (tests) the waiting is driving: shutdown runs the scheduler's
// turns on the calling thread until it is quiescent (bounded by deterministicShutdownTurns),
// and the deadline is read on the scheduler's virtual clock (SchedulerClock).

import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import MNScheduler
import Synchronization

/// Totals across the system (a snapshot).
public struct ActorSystemStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Messages handed to behaviours.
    public var delivered: Int
    /// Messages sent to dead letters.
    public var deadLettered: Int
    /// Actors spawned and not yet stopped.
    public var liveActors: Int

    public var description: String {
        "delivered \(delivered), dead-lettered \(deadLettered), live actors \(liveActors)"
    }
}

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
    /// Relaxed counters behind ``metrics`` (never touched per delivered message).
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
    /// Dead letters of messages that were never queued (refused tells, late replies, a
    /// late arrival at a cell that left): each is also a message sent that no mailbox
    /// counts. With `queuedDeadLetters`, the report's `deadLettered` (accountingReport).
    let unqueuedDeadLetters = Atomic<Int>(0)
    /// Watch messages the runtime sent (handed to the behaviour without passing a mailbox):
    /// the other part of `sent` no mailbox counts.
    let runtimeSent = Atomic<Int>(0)
    /// Messages taken out of mailboxes and held by their actors (stash, unstashed and not
    /// yet handled): part of `left` at shutdown. Changed by turns (rarely), relaxed.
    let heldBack = Atomic<Int>(0)
    /// The timeouts of pending asks (one Dispatch timer for the system; the virtual clock's
    /// timers on a DeterministicScheduler).
    let askTimer: AskTimer
    /// Asks waiting for a reply: while > 0, dead letters are searched for their promises.
    let outstandingAsks = Atomic<Int>(0)
    /// A FutexLock: spawn and every actor's last turn take it (a pthread mutex cost ~60
    /// instructions more per lock and unlock).
    let registry = FutexLock<Registry>(Registry())
    /// The automatic idle-mailbox walk's timer (ActorSystem+Reclaim), nil when off.
    let reclaimTimer = Lock<(any DispatchSourceTimer)?>(nil)
    /// Held by a walk (one at a time: the walker's snapshot word is walker-only).
    let reclaimWalk = Lock<Int>(0)
    private let shutdownResult = Lock<ShutdownReport?>(nil)
    /// Private one-worker systems of dedicated actors (``SpawnOptions/Placement/dedicatedThread``),
    /// shut down with this one.
    let dedicatedSystems = Lock<[ActorSystem]>([])
    /// The private system of main-thread actors, made on first use (ActorSystem+MainThread).
    let mainThreadSystemStorage = Lock<ActorSystem?>(nil)
    /// Typed registry for non-actor services (see ``ServiceRegistry``).
    public let services = ServiceRegistry()

    struct Registry {
        /// Live cells (registered, not yet terminated); see CellTable.
        let cells = CellTable()
        var names: [String: AnyActorCell] = [:]
        var singletons: [String: any Sendable] = [:]
        /// Pool names taken while the pool's routees are spawned.
        var reserved: Set<String> = []
        /// Set with the system's `shuttingDown`, in the same critical section: what the
        /// idle-mailbox walk, which holds the registry and not the system, stops at.
        var shuttingDown = false
        /// Cells shutdown took out of `cells` while they still ran (stragglers), with the
        /// counts it retired for them then: when one leaves, only what changed since is
        /// retired (cellTerminated). Ids and counts only: no cell is kept alive here.
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

    /// Creates a system for tests that runs on a `DeterministicScheduler`: no threads;
    /// every turn runs on the thread that drives `scheduler`, in the order its seed
    /// chooses, with virtual time (see <doc:DeterministicTesting>).
    ///
    /// The system owns the deterministic scheduler's `DeterministicScheduler.scheduler`:
    /// ``shutdown(timeout:)`` drives it until every actor stopped, then shuts it down.
    /// Event actors, pools, asks (from tasks on `scheduler.taskExecutor`) and
    /// supervision work as on a real scheduler; actors that need threads of their own —
    /// sequential, dedicated and main-thread actors — cannot be spawned
    /// (``ActorSystemError/unsupportedOnDeterministicScheduler(_:)``).
    public convenience init(name: String = "fastmailbox", scheduler: DeterministicScheduler,
                            defaultSupervisor: SupervisorStrategy = .default,
                            logger: Logger = Logger(label: "fastmailbox")) {
        self.init(name: name, scheduler: scheduler.scheduler, ownsScheduler: true,
                  defaultSupervisor: defaultSupervisor, logger: logger)
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
    init(name: String, scheduler: Scheduler, ownsScheduler: Bool, defaultSupervisor: SupervisorStrategy,
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
    @inlinable @discardableResult
    public func spawn<A: EventActor>(
        options: SpawnOptions = SpawnOptions(), _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable so the turn is specialised for A here (ActorCellBase, "Specialised turns").
        if _fastPath(options.isPlain) {
            return try spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 mailboxPass: ActorCell<A>.specializedMailboxPass, factory: factory)
        }
        return try spawnArranged(options) { (system, name) throws(ActorSystemError) in
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
    @inlinable @discardableResult
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
        return try spawnArranged(options) { (system, name) throws(ActorSystemError) in
            try system.spawnClosureCell(name: name, mailboxCapacity: options.mailboxCapacity,
                                        boundedMailbox: options.isBounded, parent: nil,
                                        supervisor: options.supervisor, receive: receive)
        }
    }

    /// Spawns a top-level actor whose behaviour is a value (``ActorBehavior``): `behavior`
    /// is stored in the actor and mutated in place by each message; a restart starts again
    /// from a copy of it. Same guarantees and errors as ``spawn(options:_:)-(_,()->A)``.
    @inlinable @discardableResult
    public func spawn<B: ActorBehavior>(
        options: SpawnOptions = SpawnOptions(), _ behavior: B
    ) throws(ActorSystemError) -> ActorRef<B.Message> {
        if _fastPath(options.isPlain) {
            return try spawnValueCell(name: options.name, options: options, parent: nil, behavior: behavior)
        }
        return try spawnArranged(options) { (system, name) throws(ActorSystemError) in
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

    /// `spawnCell` for a closure actor: its cell holds the closure itself (ClosureActorCell:
    /// no ClosureActor object beside it, one allocation fewer per spawn), and the same
    /// closure serves again after a restart (it holds no state of its own). Its preStart
    /// does nothing: born running, it gets no turn until it has work (see `enroll`).
    /// Inlinable, as spawnCell (the pass is specialised for `Message` here).
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

    /// Registers a fresh cell, makes it its parent's child, and schedules its first turn
    /// (which runs preStart) — unless it is `bornRunning`: its behaviour's preStart does
    /// nothing (a closure actor's), so the cell starts in `.running` here, before
    /// any other thread can see it, and its first turn is the one its first message or
    /// system message schedules (the mailbox's, or the system queue's, becameNonEmpty).
    /// Nothing observable is lost: the turn skipped would have run an empty preStart.
    @usableFromInline
    func enroll(_ cell: AnyActorCell, named name: String?, parent: AnyActorCell?,
                bornRunning: Bool = false) throws(ActorSystemError) {
        if bornRunning { cell.startWithoutTurn() }  // still private to this thread (C2 holds)
        try register(cell, named: name)
        if let parent { parent.children[cell.id] = cell }  // spawn from a context runs in the parent's turn
        if !bornRunning { cell.scheduleSelf() }
    }

    /// Rings of at least this many slots (32 KiB) are allocated at spawn, so running out of
    /// memory for them is a thrown error there rather than a trap at the first tell; smaller
    /// ones stay lazy (an idle actor costs no ring), and failing to allocate a few hundred
    /// bytes is the same out-of-memory every other allocation would meet.
    @inlinable static var eagerRingCapacity: Int { 4_096 }  // computed: a constant in inlined code

    /// The validated shape of an actor's user mailbox of `Message`s (see
    /// ``ActorSystemError/invalidMailboxCapacity(_:)``): the cell is its own mailbox queue
    /// (MPSCQueue, "One object"), made with this shape. Inlinable, like spawnCell: the
    /// message's item size is a constant there. After making the cell, the spawn calls
    /// `reserveEagerRing`.
    @inlinable
    func mailboxShape<Message: Sendable>(capacity: Int, for: Message.Type,
                                         reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        try queueShape(capacity: capacity, itemBytes: MessageEncoding<Message>.itemBytes, reclaimable: reclaimable)
    }

    /// The shape of a user mailbox of `itemBytes`-byte items (MessageEncoding.itemBytes of
    /// the message type). `reclaimable`: an event or sequential actor's mailbox, whose ring an
    /// idle actor gives back (``reclaimIdleMailboxes()``) — unless it is allocated at spawn
    /// (eagerRingCapacity): a ring reserved so that no send can fail to allocate one stays.
    /// Inlinable, as MPSCQueue.Shape's init: checked at compile time for a constant capacity.
    @inlinable
    func queueShape(capacity: Int, itemBytes: Int, reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        do {
            return try MPSCQueue.Shape(capacity: capacity, itemBytes: itemBytes,
                                       reclaimable: reclaimable && capacity < ActorSystem.eagerRingCapacity)
        } catch {
            throw .invalidMailboxCapacity(capacity)
        }
    }

    /// Allocates a fresh cell's ring (`queue`: the cell, its own mailbox queue, for
    /// `Message`s) at spawn when its capacity is eagerRingCapacity or more (see there):
    /// ``ActorSystemError/mailboxAllocationFailed(capacity:bytes:)`` instead of a trap at
    /// the first tell. Smaller rings stay lazy. (The cell itself, not its `mailbox`: forming
    /// that Mailbox here cost a retain and a release of the cell per spawn.)
    @inlinable
    func reserveEagerRing<Message: Sendable>(of queue: MPSCQueue, for: Message.Type) throws(ActorSystemError) {
        if _slowPath(queue.capacity >= ActorSystem.eagerRingCapacity) {
            try reserveRing(of: Mailbox<Message>(queue: queue))
        }
    }

    /// Allocates `mailbox`'s ring now (it records `Message`, see Mailbox.swift).
    @usableFromInline
    func reserveRing<Message: Sendable>(of mailbox: Mailbox<Message>) throws(ActorSystemError) {
        do { try MessageEncoding<Message>.reserveRing(of: mailbox.queue) } catch {
            throw .mailboxAllocationFailed(capacity: error.capacity, bytes: error.bytes)
        }
    }

    /// Enters `cell` in the registry (and its name, if given). Inlined into its two callers
    /// (enroll, a sequential actor's spawn), the table's insert with it.
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
            // Under the lock, so statistics and reports never count a cell twice or not at all.
            // The cell's own mailbox queue (retiredAcceptedCount, overflowCount; a router's
            // is unused: 0). Drained: what is accepted is what was taken out (a message
            // still being inserted is counted as sent when it is dead-lettered).
            let now = RetiredCounts(delivered: cell.deliveredCount, accepted: cell.retiredAcceptedCount,
                                    overflows: cell.overflowCount)
            if registry.cells.remove(cell) {
                retire(now)
            } else if let before = registry.stragglers.removeValue(forKey: cell.id) {
                // Shutdown retired the counts of this straggler as they were then: add what
                // changed since (wrapping: a difference may be negative, e.g. the queued
                // messages counted as accepted then, which are taken out by now).
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
    /// still running) are retired as they are now, queued messages included in
    /// `accepted` (they are `left`, and become dead letters when the straggler's turn
    /// ends), and the straggler is remembered so that its leaving retires only the change.
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

    /// Takes `name` for a pool before its routees exist (a placeholder until
    /// `fillReservedName`), so a taken name fails before anything is spawned.
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

    /// Registers a pool's router under its reserved name (not in `cells`: the routees are
    /// the live actors). After a shutdown began the name is simply dropped.
    func fillReservedName(_ name: String, with router: AnyActorCell) {
        registry.withLock { registry in
            guard registry.reserved.remove(name) != nil, !isShuttingDown else { return }
            registry.names[name] = router
            router.holdsRegisteredName = true
        }
    }

    /// Frees `name` at once (a restarting parent's children: their successors may be
    /// spawned under the same names while the old ones drain).
    func releaseName(of cell: AnyActorCell) {
        // Set before the cell could run or stop, never cleared (AnyActorCell): read without
        // the lock, so an unnamed actor's stop takes no lock here.
        guard cell.holdsRegisteredName else { return }
        registry.withLock { registry in
            if cell.holdsRegisteredName, registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
    }

    // MARK: dead letters

    /// Publishes a dead letter. `wasQueued`: the message had been accepted into a mailbox
    /// (it is part of that mailbox's count); false for messages refused at the door and
    /// late replies, which are counted here as sent. If the message carries the reply-to
    /// of a pending `ask`, that ask fails at once (nobody will answer it).
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

    /// `shutdown` from inside a turn (see its documentation): the waiting part runs on a
    /// thread of its own; the caller gets a snapshot at once.
    private func startShutdownFromTurn(timeout: Duration) -> ShutdownReport {
        registry.withLock { registry in registry.shuttingDown = true; shuttingDown.store(true, ordering: .releasing) }  // no spawn from here on
        DispatchQueue(label: "fastmailbox.shutdown").async { _ = self.shutdown(timeout: timeout) }
        return accountingReport(workersNotStopped: 0)
    }

    /// A shutdown report from the counters now: delivered, dead-lettered, left (messages
    /// the cells still registered hold: queued, stashed, unstashed, buffered) and sent,
    /// with those cells as `actorsNotStopped`.
    private func accountingReport(workersNotStopped: Int) -> ShutdownReport {
        // The order of the reads, and why `delivered + deadLettered + left == sent` is then
        // exact whenever nothing is lost, even while tells race the shutdown (a tell
        // refused at a closed mailbox between two reads used to count on one side only):
        // 1. The cells and the retired totals in one pass under the registry lock, which a
        //    cell's leaving takes to retire its counts: each cell is counted once, live or
        //    retired. A cell's queued count is read once, for `left` and for `sent` alike,
        //    so a tell landing in a live cell meanwhile is on both sides or on neither.
        // 2. `runtimeSent` and `queuedDeadLetters`: changed only by the turns of cells still
        //    running (a watch message handed over; a queued message dead-lettered).
        // 3. `unqueuedDeadLetters`, read once and added to both `deadLettered` and `sent`.
        //    A tell that races these reads ends there and nowhere else: refused at a closed
        //    mailbox, or landing in a cell that left (its late turn dead-letters it as never
        //    queued), it changes no figure of 1 or 2. Two separate reads of it, however
        //    ordered (the dead-letter office's total, then `sent`, as before), can fall on
        //    either side of one refusal.
        // What this cannot freeze is a cell whose turn runs during the reads (a straggler
        // whose stuck turn ends now): it moves its messages from `left` to dead letters
        // between 1 and 2. Nothing is lost; its figures settle when the turn ends.
        // ShutdownAccountingTests runs a refused tell between each two reads
        // (ShutdownReportTestHook).
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

    /// One of `accountingReport`'s reads after the registry pass: `counter` (relaxed), with
    /// the debug builds' test hook run first (ShutdownAccountingTests puts a refused tell there).
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

    /// Totals so far (a snapshot).
    public var statistics: ActorSystemStatistics {
        let (liveDelivered, live) = registry.withLock { registry in
            var delivered = retiredDelivered.load(ordering: .relaxed)
            registry.cells.forEach { delivered += $0.deliveredCount }
            return (delivered, ActorSystem.liveActors(registry))
        }
        return ActorSystemStatistics(delivered: liveDelivered, deadLettered: deadLetters.count, liveActors: live)
    }

    /// Actors not yet stopped: the registered cells, and after a shutdown the stragglers
    /// it took out of the registry while they still ran (until each leaves).
    private static func liveActors(_ registry: borrowing Registry) -> Int {
        registry.cells.count + registry.stragglers.count
    }

    /// Live actors, delivered messages and mailbox overflows, from one pass over the
    /// registry (see ``metrics``).
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
    /// Stops accepting spawns; closes every mailbox (later tells go to dead letters with
    /// reason `.systemShutDown`); lets every actor process what it already holds and stop;
    /// waits up to `timeout` for that. Actors still running then are told to stop at once.
    /// If the system created its scheduler, it is shut down: workers that finish their turn
    /// within a short grace (at most 100 ms) are joined; a worker stuck inside a turn is
    /// never waited for — it is reported in ``ShutdownReport/workersNotStopped`` and its
    /// actor's messages in ``ShutdownReport/left``; when that turn ends, they become dead
    /// letters. So the call returns within about `timeout` + 100 ms whatever the actors do.
    /// Work that reaches the system afterwards is dead-lettered, never stranded.
    ///
    /// Idempotent: later calls return the first report. Any `Duration` is accepted (a huge
    /// one waits as long as it takes; negative means zero). Must not be called from one of
    /// the scheduler's workers (it would wait for itself). It blocks the calling thread: from
    /// async code use ``gracefulShutdown(timeout:)``, which runs these same steps off
    /// Swift's cooperative pool. The report is also logged (info when everything stopped
    /// and balanced, warning otherwise).
    ///
    /// On a `DeterministicScheduler` the waiting is driving: the remaining turns run on the
    /// calling thread until every actor stopped (at most a million turns per drain), and the
    /// timeout is read on its virtual clock. Called from one of its turns, or while another
    /// thread drives it, shutdown cannot drive: it stops what it can and reports the rest
    /// (the calling actor included) in ``ShutdownReport/actorsNotStopped``; it never traps.
    ///
    /// Called from a turn of one of this system's actors (a worker of its scheduler), it
    /// cannot wait — the caller's own turn would never end. It then starts the shutdown on a
    /// thread of its own and returns at once a snapshot: what was delivered, dead-lettered
    /// and sent so far, with every live actor (the caller included) in
    /// ``ShutdownReport/actorsNotStopped``. The shutdown goes on as above once the turn
    /// returns; a later call from outside waits for it and returns its final report.
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
                // Nobody else runs the turns: run them here (not if this is called from one
                // of them, or while another thread drives: then the stragglers are reported).
                _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns)
            } else {
                while registry.withLock({ !$0.cells.isEmpty }), monotonicNanoseconds() < deadline {
                    usleep(200)
                }
            }
            // Whatever did not stop in time is told to stop now (a sequential actor's task is
            // cancelled; its remaining jobs finish on Swift's pool once the scheduler is gone).
            let stuck = registry.withLock { $0.cells.values }
            for cell in stuck { cell.stopImmediately() }
            if let engine, !stuck.isEmpty { _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns) }
            var workersNotStopped = 0
            if ownsScheduler {
                // What is left of the timeout plus a short grace for turns about to end
                // (another unit on the scheduler may still be running one); a worker still
                // inside a turn after that is detached, never joined.
                let now = clock.nanoseconds()
                let remaining = deadline > now ? Int64(clamping: deadline - now) : 0
                scheduler.shutdown(timeout: .nanoseconds(remaining) + .milliseconds(100))
                workersNotStopped = scheduler.workersStillRunning
            }
            // Every cell the scheduler handed back has dead-lettered its work by now; the
            // cells still registered are running (a stuck turn, a body that ignores its stop).
            deadLetters.finishSubscribers()
            deadLetterLog.flush(logger: logger)
            var report = accountingReport(workersNotStopped: workersNotStopped)
            // Dedicated actors' private systems: same deadline, figures added.
            for system in dedicated {
                let now = clock.nanoseconds()
                let part = system.shutdown(timeout: .nanoseconds(deadline > now ? Int64(clamping: deadline - now) : 0))
                report.add(part)
            }
            // Break the cycles system → registry → cells → system, and the singleton table.
            // Stragglers keep themselves alive until their turn ends (removeAll hands the
            // registry's retain of a cell that is not idle to the worker running or holding
            // it: CellTable T4) and dead-letter what they hold then. Their counts are
            // retired first, so statistics go on agreeing with the report.
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
/// counters (ShutdownAccountingTests runs a refused tell there), for one system.
enum ShutdownReportTestHook {
    private static let point = SystemHookPoint()

    /// `action` runs between each two reads of `system`'s next reports, until `disarm()`.
    static func arm(for system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func betweenReads(of system: ActorSystem) { point.fire(for: system) }
}
#endif
