// ActorSystem: owns the scheduler, the registry of live actors, dead letters and the
// counters behind the shutdown report. Why `delivered + deadLettered + left == sent`
// holds, and how shutdown runs: <doc:Architecture>, "Shutdown accounting".

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
    /// Messages handed to behaviours.
    public var delivered: Int
    /// Messages that went to dead letters.
    public var deadLettered: Int
    /// Messages still queued in actors not stopped at the timeout.
    public var left: Int
    /// Actors not stopped at the timeout.
    public var actorsNotStopped: Int
    /// Messages the runtime accepted: every tell and every watch message it sent.
    public var sent: Int
    /// Worker threads still in a turn at the timeout, detached (0 if not the owner).
    public var workersNotStopped: Int
    /// Names of the actors not stopped (at most 20).
    public var actorsNotStoppedNames: [String]

    /// Adds a dedicated actor's system's report.
    mutating func add(_ other: ShutdownReport) {
        delivered += other.delivered
        deadLettered += other.deadLettered
        left += other.left
        actorsNotStopped += other.actorsNotStopped
        sent += other.sent
        workersNotStopped += other.workersNotStopped
        actorsNotStoppedNames = Array((actorsNotStoppedNames + other.actorsNotStoppedNames).prefix(20))
    }

    /// True when nothing was lost: `delivered + deadLettered + left == sent`.
    public var isBalanced: Bool { delivered + deadLettered + left == sent }

    public var description: String {
        var text = "sent \(sent): delivered \(delivered), dead-lettered \(deadLettered), left \(left) in \(actorsNotStopped) actors"
        if !actorsNotStoppedNames.isEmpty { text += " (\(actorsNotStoppedNames.joined(separator: ", ")))" }
        if workersNotStopped > 0 { text += "; \(workersNotStopped) workers still inside a turn" }
        return text
    }
}

/// The home of a set of actors: spawns them, runs them on an M:N `Scheduler`, keeps the
/// registry by name and the dead letters. Every method may be called from any thread or
/// task. ``logger`` gets supervisor decisions, rate-limited dead letters, unknown `MN_`
/// variables and the shutdown report; nothing per message.
public final class ActorSystem: Sendable {
    /// Default ring slots of an actor's mailbox: small, so an idle actor costs little.
    public static let defaultMailboxCapacity = 32

    /// The system's name (used in descriptions).
    public let name: String
    /// The scheduler whose workers run every actor turn.
    public let scheduler: Scheduler
    /// Undeliverable messages: counted and subscribable.
    public let deadLetters = DeadLetterOffice()
    /// Decides about failures of top-level actors.
    public let defaultSupervisor: SupervisorStrategy

    /// Where the runtime logs; the base of every actor's ``ActorContext/log``.
    public let logger: Logger
    /// Relaxed counters behind ``metrics``.
    let counters = SystemCounters()
    let deadLetterLog = DeadLetterLog()

    private let ownsScheduler: Bool
    private let shuttingDown = Atomic<Bool>(false)
    /// Dead letters already in a mailbox's accepted count.
    let queuedDeadLetters = Atomic<Int>(0)
    /// Dead letters never queued, counted as sent here.
    let unqueuedDeadLetters = Atomic<Int>(0)
    /// Watch messages handed to behaviours (part of `sent`).
    let runtimeSent = Atomic<Int>(0)
    /// Stashed messages: part of `left` at shutdown.
    let heldBack = Atomic<Int>(0)
    let askTimer: AskTimer
    /// While > 0, dead letters are searched for pending asks.
    let outstandingAsks = Atomic<Int>(0)
    /// Taken by spawn and by every actor's last turn.
    let registry = FutexLock<Registry>(Registry())
    /// nil when off.
    let reclaimTimer = Lock<(any DispatchSourceTimer)?>(nil)
    /// One walk at a time.
    let reclaimWalk = Lock<Int>(0)
    private let shutdownResult = Lock<ShutdownReport?>(nil)
    /// Shut down with this one.
    let dedicatedSystems = Lock<[ActorSystem]>([])
    /// Made on first use.
    let mainThreadSystemStorage = Lock<ActorSystem?>(nil)

    struct Registry {
        /// Live cells (CellTable).
        let cells = CellTable()
        var names: [String: AnyActorCell] = [:]
        var singletons: [String: any Sendable] = [:]
    /// Taken while the pool's routees are spawned.
        var reserved: Set<String> = []
        /// Mirrors `shuttingDown` for the walk, which holds only the registry.
        var shuttingDown = false
        /// Running cells shutdown removed, with the counts retired then.
        var stragglers: [ActorID: RetiredCounts] = [:]
        /// Delivered counts of cells gone from the table (plain: only read and written
        /// under the lock, like the table).
        var retiredDelivered = 0
        /// Accepted counts of cells gone from the table.
        var retiredAccepted = 0
    }

    struct RetiredCounts {
        var delivered: Int
        var accepted: Int
        var overflows: Int
    }

    /// Process-wide, so refs of different systems never compare equal.
    private static let nextID = Atomic<UInt64>(0)

    /// Creates a system with its own scheduler.
    /// - Parameters:
    ///   - name: used in descriptions and logs.
    ///   - configuration: scheduler settings; `MN_` environment variables apply underneath.
    ///   - defaultSupervisor: decides about failures of top-level actors.
    ///   - logger: see ``logger``; by default labelled `"fastmailbox"`.
    /// - Throws: `SchedulerConfigurationError` naming a bad variable, its value and range.
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

    /// Creates a system on an existing scheduler, which its shutdown leaves running.
    public convenience init(name: String = "fastmailbox", scheduler: Scheduler,
                defaultSupervisor: SupervisorStrategy = .default,
                logger: Logger = Logger(label: "fastmailbox")) {
        self.init(name: name, scheduler: scheduler, ownsScheduler: false, defaultSupervisor: defaultSupervisor,
                  logger: logger)
    }

    /// A system on `scheduler`, which its shutdown shuts down when `ownsScheduler`.
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

    /// Per drain, on a deterministic scheduler.
    static let deterministicShutdownTurns = 1_000_000

    /// For placements and bodies that need threads of their own.
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

    /// Spawns a top-level actor whose behaviour is an ``EventActor`` made by `factory`
    /// (again on each restart). Guarantees and errors: ``SpawnOptions``.
    @inlinable @inline(__always) @discardableResult
    public func spawn<A: EventActor>(
        options: SpawnOptions = .defaults, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable: the turn is specialised for A here.
        if _fastPath(options.isPlain) {
            return try spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 behavior: EventActorCellBehavior(factory: factory))
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
                                 behavior: EventActorCellBehavior(factory: factory))
        }
    }

    /// Spawns a top-level actor whose behaviour is a closure, called for each message.
    ///
    /// Name the message type with `of:` or with the ref's type:
    /// ```swift
    /// let printer = try system.spawn(of: String.self) { line, context in print(line) }
    /// let adder: ActorRef<Int> = try system.spawn { n, context in total.add(n) }
    /// ```
    /// A restart calls the same closure again. Guarantees and errors: ``SpawnOptions``.
    @inlinable @inline(__always) @discardableResult
    public func spawn<Message: Sendable>(
        of messageType: Message.Type = Message.self, options: SpawnOptions = .defaults,
        receive: __owned @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        if _fastPath(options.isPlain) {
            return try spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 behavior: ClosureCellBehavior(consume receive))
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
            try system.spawnCell(name: name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 behavior: ClosureCellBehavior(receive))
        }
    }

    /// Spawns a top-level actor whose behaviour is a value (``ActorBehavior``), mutated in
    /// place by each message; a restart starts from a copy of `behavior`. Guarantees and
    /// errors: ``SpawnOptions``.
    @inlinable @inline(__always) @discardableResult
    public func spawn<B: ActorBehavior>(
        options: SpawnOptions = .defaults, _ behavior: B
    ) throws(ActorSystemError) -> ActorRef<B.Message> {
        if _fastPath(options.isPlain) {
            return try spawnCell(name: options.name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 behavior: ValueCellBehavior(behavior))
        }
        return try spawnArranged(options, behavior: behavior)
    }

    /// The value-behaviour spawn with a pool or a placement off the workers. Out of line,
    /// so the plain spawn above stays small enough to inline.
    @inlinable @inline(never)
    func spawnArranged<B: ActorBehavior>(_ options: SpawnOptions, behavior: B) throws(ActorSystemError) -> ActorRef<B.Message> {
        try spawnArranged(options) { (system, name) throws(ActorSystemError) in
            try system.spawnCell(name: name, mailboxCapacity: options.mailboxCapacity,
                                 boundedMailbox: options.isBounded, parent: nil, supervisor: options.supervisor,
                                 behavior: ValueCellBehavior(behavior))
        }
    }

    @usableFromInline func nextActorID() -> ActorID {
        ActorID(rawValue: ActorSystem.nextID.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// A pool or a placement off the workers: `make` spawns one actor on a given system.
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

    /// On the system that runs `placement`.
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

    /// Every spawn of a behaviour ends here. Inlinable: the cell and its own turn are
    /// specialised for `Behavior` at the call site. `supervisor` nil: the default.
    @inlinable
    func spawnCell<Behavior: CellBehavior & ~Copyable>(
        name: String?, mailboxCapacity: Int, boundedMailbox: Bool, parent: AnyActorCell?,
        supervisor: SupervisorStrategy?, behavior: consuming Behavior
    ) throws(ActorSystemError) -> ActorRef<Behavior.Message> {
        // A bounded mailbox keeps its ring: a sealed ring would read as "full".
        let shape = try mailboxShape(capacity: mailboxCapacity, for: Behavior.Message.self, reclaimable: !boundedMailbox)
        behavior.prepare()  // once the capacity is known to be valid
        let cell = ActorCell<Behavior>(id: nextActorID(), name: name, system: self, parent: parent,
                                       supervisor: supervisor, mailbox: shape,
                                       turn: ActorCell<Behavior>.specializedTurn,
                                       bounded: boundedMailbox, behavior: behavior)
        // The cell stores its queue: reserve the eager ring now.
        try reserveEagerRing(of: cell.queue, for: Behavior.Message.self)
        try enroll(cell, named: name, parent: parent, bornRunning: Behavior.isBornRunning)
        return ActorRef(cell: cell)  // the case directly: no existential, no witness-table look-up
    }

    /// Registers a fresh cell under its parent and schedules preStart; a `bornRunning`
    /// cell starts here and waits for work.
    @usableFromInline
    func enroll(_ cell: AnyActorCell, named name: String?, parent: AnyActorCell?,
                bornRunning: Bool = false) throws(ActorSystemError) {
        if bornRunning { cell.startWithoutTurn() }  // still private to this thread (C2 holds)
        try register(cell, named: name)
        if let parent { parent.children[cell.id] = cell }  // spawn from a context runs in the parent's turn
        if !bornRunning { cell.scheduleSelf() }
    }

    /// Rings this large are allocated at spawn: out of memory throws there, not at a tell.
    @inlinable static var eagerRingCapacity: Int { 4_096 }  // computed: a constant in inlined code

    @inlinable
    func mailboxShape<Message: Sendable>(capacity: Int, for: Message.Type,
                                         reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        try queueShape(capacity: capacity, itemBytes: MessageEncoding<Message>.itemBytes, reclaimable: reclaimable)
    }

    /// `reclaimable` unless eager.
    @inlinable
    func queueShape(capacity: Int, itemBytes: Int, reclaimable: Bool = false) throws(ActorSystemError) -> MPSCQueue.Shape {
        do {
            return try MPSCQueue.Shape(capacity: capacity, itemBytes: itemBytes,
                                       reclaimable: reclaimable && capacity < ActorSystem.eagerRingCapacity)
        } catch {
            throw .invalidMailboxCapacity(capacity)
        }
    }

    /// A cell's queue, for `Message` items.
    @inlinable
    func reserveEagerRing<Message: Sendable>(of queue: borrowing MPSCQueue, for: Message.Type) throws(ActorSystemError) {
        if _slowPath(queue.capacity >= ActorSystem.eagerRingCapacity) {
            try reserveRing(of: queue, for: Message.self)
        }
    }

    @usableFromInline
    func reserveRing<Message: Sendable>(of queue: borrowing MPSCQueue, for: Message.Type) throws(ActorSystemError) {
        do { try MessageEncoding<Message>.reserveRing(of: queue) } catch {
            throw .mailboxAllocationFailed(capacity: error.capacity, bytes: error.bytes)
        }
    }

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

    /// A cell's last turn.
    func cellTerminated(_ cell: AnyActorCell) {
        registry.withLock { registry in
            // Under the lock, so each cell is counted exactly once.
            let now = RetiredCounts(delivered: cell.deliveredCount, accepted: cell.retiredAcceptedCount,
                                    overflows: cell.overflowCount)
            if registry.cells.remove(cell) {
                retire(now, into: &registry)
            } else if let before = registry.stragglers.removeValue(forKey: cell.id) {
                // Shutdown retired its counts then: add the change (may be negative).
                retire(RetiredCounts(delivered: now.delivered &- before.delivered,
                                     accepted: now.accepted &- before.accepted,
                                     overflows: now.overflows &- before.overflows), into: &registry)
            } else {
                return
            }
            if cell.holdsRegisteredName, registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
    }

    /// Under the registry lock.
    private func retire(_ counts: RetiredCounts, into registry: inout Registry) {
        registry.retiredDelivered &+= counts.delivered
        registry.retiredAccepted &+= counts.accepted
        // Shared with the ring release, outside the lock; usually nothing to add.
        if counts.overflows != 0 { counters.retiredOverflows.wrappingAdd(counts.overflows, ordering: .relaxed) }
    }

    /// Retires running cells' counts now and remembers them (stragglers).
    private func retireStragglers(_ registry: inout Registry) {
        registry.cells.forEach { cell in
            let figures = cell.reportFigures
            let counts = RetiredCounts(delivered: figures.delivered, accepted: figures.accepted,
                                       overflows: cell.overflowCount)
            retire(counts, into: &registry)
            registry.stragglers[cell.id] = counts
        }
        registry.cells.removeAll()
    }

    /// For a pool, before its routees exist.
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

    /// A pool's router, unless shut down.
    func fillReservedName(_ name: String, with router: AnyActorCell) {
        registry.withLock { registry in
            guard registry.reserved.remove(name) != nil, !isShuttingDown else { return }
            registry.names[name] = router
            router.holdsRegisteredName = true
        }
    }

    /// At once, for a restarting parent's new children.
    func releaseName(of cell: AnyActorCell) {
        // Set before the cell could run, never cleared.
        guard cell.holdsRegisteredName else { return }
        registry.withLock { registry in
            if cell.holdsRegisteredName, registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
    }

    // MARK: dead letters

    /// `wasQueued`: counted by a mailbox, else counted as sent here. Fails a pending
    /// `ask` the message carries.
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

    /// Shuts down on another thread; returns a snapshot now.
    private func startShutdownFromTurn(timeout: Duration) -> ShutdownReport {
        registry.withLock { registry in registry.shuttingDown = true; shuttingDown.store(true, ordering: .releasing) }  // no spawn from here on
        DispatchQueue(label: "fastmailbox.shutdown").async { _ = self.shutdown(timeout: timeout) }
        return accountingReport(workersNotStopped: 0)
    }

    private func accountingReport(workersNotStopped: Int) -> ShutdownReport {
        // Exact while tells race the reads: <doc:Architecture>, "Shutdown accounting".
        let (cells, delivered, accepted, left) = registry.withLock { registry in
            var delivered = registry.retiredDelivered
            var accepted = registry.retiredAccepted
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

    private func readForReport(_ counter: borrowing Atomic<Int>) -> Int {
        #if DEBUG
        ShutdownReportTestHook.betweenReads(of: self)
        #endif
        return counter.load(ordering: .relaxed)
    }

    /// Four levels deep.
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

    func withSingletons<R>(_ body: (inout [String: any Sendable]) throws -> R) rethrows -> R {
        try registry.withLock { try body(&$0.singletons) }
    }

    // MARK: statistics and shutdown

    /// Plus shutdown's stragglers.
    private static func liveActors(_ registry: borrowing Registry) -> Int {
        registry.cells.count + registry.stragglers.count
    }

    /// In one pass.
    func registryTotals() -> (live: Int, delivered: Int, overflows: Int) {
        registry.withLock { registry in
            var delivered = registry.retiredDelivered
            var overflows = counters.retiredOverflows.load(ordering: .relaxed)
            registry.cells.forEach { cell in
                delivered += cell.deliveredCount
                overflows += cell.overflowCount
            }
            return (ActorSystem.liveActors(registry), delivered, overflows)
        }
    }

    /// ``ShutdownReport/sent`` so far.
    var acceptedTotal: Int {
        registry.withLock { registry in
            var accepted = registry.retiredAccepted
            registry.cells.forEach { accepted += $0.acceptedCount }
            return accepted
        } + runtimeSent.load(ordering: .relaxed) + unqueuedDeadLetters.load(ordering: .relaxed)
    }

    /// Shuts the system down gracefully and reports the accounting.
    ///
    /// Refuses spawns and closes every mailbox (later tells are dead letters,
    /// `.systemShutDown`); every actor handles what it holds and stops. After `timeout`
    /// the rest are stopped and an owned scheduler shut down without joining a worker
    /// stuck in a turn, so it returns within about `timeout` + 100 ms. Idempotent; a
    /// negative timeout means zero; blocks the calling thread (from async code:
    /// ``gracefulShutdown(timeout:)``). Logged at debug when clean, else warning. From a
    /// turn of this system it returns a snapshot at once and shuts down on another
    /// thread. Details, deterministic schedulers included: <doc:Guarantees>.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) -> ShutdownReport {
        if scheduler.isCurrentThreadWorker { return startShutdownFromTurn(timeout: timeout) }
        return shutdownResult.withLock { result in
            if let result { return result }
            registry.withLock { registry in registry.shuttingDown = true; shuttingDown.store(true, ordering: .releasing) }
            reclaimTimer.withLock { $0?.cancel(); $0 = nil }
            let dedicated = dedicatedSystems.withLock { systems in defer { systems = [] }; return systems }
            let cells = registry.withLock { $0.cells.values }
            // Last slot first: the stop turns run about in this order, and removing the
            // last entry of a run of slots shifts nothing back (CellTable T2).
            for cell in cells.reversed() {
                cell.closeMailbox()
                cell.sendSystem(.stop(.afterDrainingMailbox, .systemShutDown))
            }
            let clock = scheduler.clock
            let deadline = clock.deadline(after: timeout)
            let engine = scheduler.deterministicEngine
            if let engine {
            // Run the turns here; stragglers are reported.
                _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns)
            } else {
                while registry.withLock({ !$0.cells.isEmpty }), monotonicNanoseconds() < deadline {
                    usleep(200)
                }
            }
            let stuck = registry.withLock { $0.cells.values }
            for cell in stuck { cell.stopImmediately() }
            if let engine, !stuck.isEmpty { _ = engine.driveForShutdown(maxTurns: ActorSystem.deterministicShutdownTurns) }
            var workersNotStopped = 0
            if ownsScheduler {
            // The rest of the timeout plus a grace; a worker still in a turn is detached.
                let now = clock.nanoseconds()
                let remaining = deadline > now ? Int64(clamping: deadline - now) : 0
                scheduler.shutdown(timeout: .nanoseconds(remaining) + .milliseconds(100))
                workersNotStopped = scheduler.workersStillRunning
            }
            deadLetters.finishSubscribers()
            deadLetterLog.flush(logger: logger)
            var report = accountingReport(workersNotStopped: workersNotStopped)
            for system in dedicated {
                let now = clock.nanoseconds()
                let part = system.shutdown(timeout: .nanoseconds(deadline > now ? Int64(clamping: deadline - now) : 0))
                report.add(part)
            }
        // Break system → registry → cells → system; a straggler lives until its turn ends
        // (CellTable T4). Counts are retired first.
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

/// A field that may be a pending ask's reply-to.
protocol ReplyRefCarrier {
    var pendingAsk: (any AskFailing)? { get }
}

extension ActorRef: ReplyRefCarrier {}

#if DEBUG
/// Debug builds only: runs an action between the report's counter reads.
enum ShutdownReportTestHook {
    private static let point = SystemHookPoint()

    static func arm(for system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func betweenReads(of system: ActorSystem) { point.fire(for: system) }
}
#endif
