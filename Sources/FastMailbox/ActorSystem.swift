// ActorSystem — owns the scheduler, the registry of live actors, dead letters and the
// counters that make shutdown's accounting exact.
//
// Accounting: every message accepted by a mailbox ends in exactly one of
//   delivered     handed to a behaviour (per-cell counters, summed),
//   dead-lettered published to `deadLetters` (stopped recipient, late ask reply, shutdown),
//   left          still queued when shutdown gave up waiting (reported, then released).
// Shutdown: stop accepting spawns; close every mailbox (later tells → dead letters with
// reason .systemShutDown) and let each actor process what it already has, then stop;
// wait until every actor stopped or the timeout passed; shut the scheduler down if this
// system owns it (joining every worker); count what is left.

import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import MNScheduler
import Synchronization

/// Lets shutdown stop any cell without knowing its message type.
protocol MessageRecipientStopping { func stopNow() }
extension ActorCellBase: MessageRecipientStopping { func stopNow() { stop(.immediately) } }
extension SequentialActorCell: MessageRecipientStopping { func stopNow() { stop(.immediately) } }

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

    public var description: String {
        "delivered \(delivered), dead-lettered \(deadLettered), left \(left) in \(actorsNotStopped) actors"
    }
}

/// The home of a set of actors: spawns them, runs them on an M:N `Scheduler`, keeps the
/// registry by name and the dead letters.
///
/// Thread-safety: every method may be called from any thread or task, except
/// ``shutdown(timeout:)``, which waits and must not run on one of the system's own workers.
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

    private let ownsScheduler: Bool
    private let shuttingDown = Atomic<Bool>(false)
    /// Delivered counts of cells that already stopped.
    private let retiredDelivered = Atomic<Int>(0)
    private let registry = Lock<Registry>(Registry())
    private let shutdownResult = Lock<ShutdownReport?>(nil)
    /// Typed registry for non-actor services (see ``ServiceRegistry``).
    public let services = ServiceRegistry()

    struct Registry {
        var cells: [ActorID: AnyActorCell] = [:]
        var names: [String: AnyActorCell] = [:]
        var singletons: [String: any Sendable] = [:]
    }

    /// Actor ids are process-wide so refs of different systems never compare equal.
    private static let nextID = Atomic<UInt64>(0)

    /// Creates a system with its own scheduler.
    /// - Parameters:
    ///   - name: used in descriptions and diagnostics.
    ///   - configuration: scheduler settings in code; environment variables
    ///     (`MN_WORKERS`, …) apply underneath them, as `SchedulerConfiguration` documents.
    ///   - defaultSupervisor: decides about failures of top-level actors.
    /// - Throws: `SchedulerConfigurationError` naming a bad variable, its value and the allowed range.
    public init(name: String = "fastmailbox",
                configuration: SchedulerConfiguration = SchedulerConfiguration(),
                defaultSupervisor: SupervisorStrategy = .default) throws(SchedulerConfigurationError) {
        self.name = name
        self.scheduler = try Scheduler(configuration: configuration)
        self.ownsScheduler = true
        self.defaultSupervisor = defaultSupervisor
    }

    /// Creates a system on an existing scheduler (shared with other systems or executors;
    /// this system's shutdown then does not shut it down).
    public init(name: String = "fastmailbox", scheduler: Scheduler,
                defaultSupervisor: SupervisorStrategy = .default) {
        self.name = name
        self.scheduler = scheduler
        self.ownsScheduler = false
        self.defaultSupervisor = defaultSupervisor
    }

    /// True once ``shutdown(timeout:)`` has begun.
    public var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    // MARK: spawning

    /// Spawns a top-level event-based actor. `factory` makes the instance now and a fresh
    /// one on every supervisor restart. Costs no thread; see ``defaultMailboxCapacity``.
    /// - Throws: ``ActorSystemError``.
    @discardableResult
    public func spawn<A: EventActor>(
        name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        try spawnCell(name: name, mailboxCapacity: mailboxCapacity, parent: nil,
                      supervisor: supervisor ?? defaultSupervisor, factory: factory)
    }

    /// Spawns a top-level actor whose behaviour is a closure.
    @discardableResult
    public func spawn<Message: Sendable>(
        name: String? = nil, mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil,
        receive: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        try spawn(name: name, mailboxCapacity: mailboxCapacity, supervisor: supervisor) { ClosureActor(receive) }
    }

    func nextActorID() -> ActorID {
        ActorID(rawValue: ActorSystem.nextID.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    func spawnCell<A: EventActor>(
        name: String?, mailboxCapacity: Int, parent: AnyActorCell?,
        supervisor: SupervisorStrategy, factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        let mailbox: MPSCQueue
        do { mailbox = try MPSCQueue(capacity: mailboxCapacity) } catch { throw .invalidMailboxCapacity(mailboxCapacity) }
        let id = nextActorID()
        let cell = ActorCell<A>(id: id, name: name ?? "$\(id.rawValue)", system: self, parent: parent,
                                supervisor: supervisor, mailbox: mailbox, factory: factory)
        try register(cell, named: name)
        if let parent { parent.children[id] = cell }  // spawn from a context runs in the parent's turn
        cell.scheduleSelf()  // the first turn runs preStart
        return ActorRef(cell)
    }

    func register(_ cell: AnyActorCell, named name: String?) throws(ActorSystemError) {
        let error: ActorSystemError? = registry.withLock { registry in
            if isShuttingDown { return .shutDown }
            if let name {
                if registry.names[name] != nil { return .duplicateName(name) }
                registry.names[name] = cell
            }
            registry.cells[cell.id] = cell
            return nil
        }
        if let error { throw error }
    }

    /// Called by a cell's last turn.
    func cellTerminated(_ cell: AnyActorCell) {
        retiredDelivered.wrappingAdd(cell.delivered.load(ordering: .relaxed), ordering: .relaxed)
        registry.withLock { registry in
            registry.cells[cell.id] = nil
            if registry.names[cell.name] === cell { registry.names[cell.name] = nil }
        }
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
            (registry.cells.values.reduce(0) { $0 + $1.delivered.load(ordering: .relaxed) }, registry.cells.count)
        }
        return ActorSystemStatistics(
            delivered: retiredDelivered.load(ordering: .relaxed) + liveDelivered,
            deadLettered: deadLetters.count, liveActors: live)
    }

    /// Shuts the system down gracefully and reports the accounting.
    ///
    /// Stops accepting spawns; closes every mailbox (later tells go to dead letters with
    /// reason `.systemShutDown`); lets every actor process what it already holds and stop;
    /// waits up to `timeout` for that; then, if the system created its scheduler, shuts it
    /// down and joins its workers. Messages of actors still running at the timeout are
    /// counted as `left` and released. Idempotent: later calls return the first report.
    /// Must not be called from one of the scheduler's workers (it would wait for itself).
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) -> ShutdownReport {
        precondition(!scheduler.isCurrentThreadWorker,
                     "ActorSystem.shutdown() called from an actor turn: it waits for every actor, including the caller")
        return shutdownResult.withLock { result in
            if let result { return result }
            registry.withLock { _ in shuttingDown.store(true, ordering: .releasing) }
            let cells = registry.withLock { Array($0.cells.values) }
            for cell in cells {
                cell.closeMailbox()
                cell.sendSystem(.stop(.afterDrainingMailbox, .systemShutDown))
            }
            let (seconds, attos) = timeout.components
            let deadline = DispatchTime.now().uptimeNanoseconds
                + UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attos) / 1_000_000_000)
            while registry.withLock({ !$0.cells.isEmpty }), DispatchTime.now().uptimeNanoseconds < deadline {
                usleep(500)
            }
            // Whatever did not stop in time is told to stop now (a sequential actor's task is
            // cancelled; its remaining jobs finish on Swift's pool once the scheduler is gone).
            let stuck = registry.withLock { Array($0.cells.values) }
            for cell in stuck { (cell as? any MessageRecipientStopping)?.stopNow() }
            if ownsScheduler { scheduler.shutdown() }
            let remaining = registry.withLock { Array($0.cells.values) }
            // Counted over every cell that was still registered at the timeout: one that
            // stopped in between may still hold messages no turn will dead-letter now.
            let left = stuck.reduce(0) { $0 + $1.userMailboxDepth }
            deadLetters.finishSubscribers()
            let stats = statistics
            let report = ShutdownReport(delivered: stats.delivered, deadLettered: stats.deadLettered,
                                        left: left, actorsNotStopped: remaining.count)
            result = report
            return report
        }
    }
}
