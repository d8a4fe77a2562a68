// AnyActorCell — the untyped part of every actor: identity, lifecycle, the system queue,
// children and watchers. ActorCell<A> adds the typed mailbox and behaviour on top.
//
// Confinement rules (what makes the @unchecked Sendable below sound):
//  (C1) `let` fields are immutable after init.
//  (C2) every `var` here is touched only from inside this cell's turns (runTurn on a
//       scheduler worker); debug builds check it where user code holds an ActorContext
//       (TurnConfinement.swift). The scheduler never runs a unit on two workers at once and
//       orders successive turns (ScheduledUnit's state word + run-queue edges), so these
//       fields behave like a single-threaded object's.
//  (C3) other threads reach a cell only through thread-safe entry points: the MPSCQueues
//       (user mailbox, system queue), Atomics, and Scheduler.schedule.
// `delivered` is an Atomic written only by the turn (relaxed load+store, no RMW) so
// statistics can read it from any thread without a race.

import Logging
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

@usableFromInline
class AnyActorCell: ScheduledUnit, @unchecked Sendable {
    @usableFromInline enum Phase: Equatable { case created, running, draining(TerminationReason), stopped }

    let id: ActorID
    let name: String
    @usableFromInline let system: ActorSystem
    /// The parent cell (nil for top-level actors). Strong: a child keeps its parent's cell
    /// object alive (not running); the parent drops the child when it terminates.
    let parent: AnyActorCell?
    /// The strategy that decides about *this* cell's failures (its parent's, or the system default).
    let supervisor: SupervisorStrategy
    /// Lifecycle traffic (SystemMessage, boxed): a retained MPSCQueue created by the first
    /// system message (most actors never get one: spawn needs none), installed by CAS
    /// (acq_rel; the loser releases its own), read with acquire.
    @usableFromInline let systemQueueStorage = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Messages handed to the behaviour so far (only the turn writes it).
    @usableFromInline let delivered = Atomic<Int>(0)
    #if DEBUG
    /// The thread running this cell's turn, 0 outside turns (debug builds; TurnConfinement T1).
    let turnThread = Atomic<UInt>(0)
    #endif

    // Turn-confined state (C2). `@exclusivity(unchecked)`: the turn reads these on every
    // message; the scheduler's confinement (C2) is what rules out overlapping accesses, so
    // the runtime's dynamic exclusivity check (swift_beginAccess, ~14 % of a ping-pong
    // message's instructions) proves nothing it does not already guarantee.
    @exclusivity(unchecked) @usableFromInline var phase: Phase = .created
    /// `isStopped` without the synthesized `==` of an enum with a payload.
    @inlinable @inline(__always) final var isStopped: Bool { if case .stopped = phase { return true } else { return false } }
    /// `isCreated`, likewise.
    @inlinable @inline(__always) final var isCreated: Bool { if case .created = phase { return true } else { return false } }
    @exclusivity(unchecked) @usableFromInline var pendingStop: TerminationReason?
    /// True once the registry maps this cell's name to it (a name given at spawn, or a
    /// pool's). Guarded by the system's registry lock: written and read only under it, so
    /// unnamed actors never hash their generated name on the way out.
    @exclusivity(unchecked) var holdsRegisteredName = false

    /// Lifecycle state most actors never use (children, watchers, restarts, termination),
    /// allocated on first use so an idle actor stays small. Turn-confined (C2).
    final class Extras {
        // Turn-confined (C2), like `phase`: no dynamic exclusivity checks.
        @exclusivity(unchecked) var children: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) var watchers: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) var restartBudget = RestartBudget()
        @exclusivity(unchecked) var termination: Terminated?
        /// Set by the turn that found the stopped cell drained and left the registry.
        @exclusivity(unchecked) var leftRegistry = false
        /// `await ref.terminated` callers, resumed when the cell stops.
        @exclusivity(unchecked) var observers: [TerminationObserver] = []
        /// `context.log`, built on first use (the system's logger plus actor/id, actor/name).
        @exclusivity(unchecked) var logger: Logger?
    }
    @exclusivity(unchecked) private var extrasStorage: Extras?
    private final var extras: Extras {
        if let extrasStorage { return extrasStorage }
        let fresh = Extras()
        extrasStorage = fresh
        return fresh
    }
    final var children: [ActorID: AnyActorCell] {
        get { extrasStorage?.children ?? [:] }
        _modify { yield &extras.children }
    }
    final var watchers: [ActorID: AnyActorCell] {
        get { extrasStorage?.watchers ?? [:] }
        _modify { yield &extras.watchers }
    }
    final var restartBudget: RestartBudget {
        get { extrasStorage?.restartBudget ?? RestartBudget() }
        _modify { yield &extras.restartBudget }
    }
    final var leftRegistry: Bool {
        get { extrasStorage?.leftRegistry ?? false }
        _modify { yield &extras.leftRegistry }
    }
    final var termination: Terminated? {
        get { extrasStorage?.termination }
        _modify { yield &extras.termination }
    }
    final var observers: [TerminationObserver] {
        get { extrasStorage?.observers ?? [] }
        _modify { yield &extras.observers }
    }

    /// The system's logger with this actor's `actor/id` and `actor/name` (turn only; built
    /// once per actor, on first use).
    final var logger: Logger {
        if let logger = extrasStorage?.logger { return logger }
        var logger = system.logger
        logger[metadataKey: "actor/id"] = "\(id.rawValue)"
        logger[metadataKey: "actor/name"] = "\(name)"
        extras.logger = logger
        return logger
    }

    init(id: ActorID, name: String, system: ActorSystem, parent: AnyActorCell?, supervisor: SupervisorStrategy) {
        self.id = id
        self.name = name
        self.system = system
        self.parent = parent
        self.supervisor = supervisor
        super.init()
    }

    deinit {
        if let queue = systemQueueStorage.load(ordering: .acquiring) {
            let systemQueue = Unmanaged<MPSCQueue>.fromOpaque(queue).takeRetainedValue()
            MessageEncoding<SystemMessage>.discardAll(in: systemQueue)
        }
    }

    /// The system queue if one was created.
    final var systemQueue: MPSCQueue? {
        guard let queue = systemQueueStorage.load(ordering: .acquiring) else { return nil }
        return Unmanaged<MPSCQueue>.fromOpaque(queue).takeUnretainedValue()
    }

    private final func makeSystemQueue() -> MPSCQueue {
        let fresh = Unmanaged.passRetained(try! MessageEncoding<SystemMessage>.makeQueue(capacity: 4))
        let (won, current) = systemQueueStorage.compareExchange(
            expected: nil, desired: fresh.toOpaque(), successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if won { return fresh.takeUnretainedValue() }
        fresh.release()
        return Unmanaged<MPSCQueue>.fromOpaque(current!).takeUnretainedValue()
    }

    /// Enqueues a system message from any thread and schedules the cell if it was idle.
    final func sendSystem(_ message: SystemMessage) {
        let queue = systemQueue ?? makeSystemQueue()
        if case (.accepted(true), _) = MessageEncoding<SystemMessage>.enqueue(message, into: queue) {
            scheduleSelf()
        }
    }

    /// Makes the cell runnable. After the scheduler shut down, the scheduler hands the cell
    /// to `runAfterShutdown` instead, which dead-letters the work (never left in a queue).
    final func scheduleSelf() {
        // The cell holds the system and the system its scheduler (both `let`): no retain
        // of either is needed around the call.
        Unmanaged.passUnretained(system.scheduler)._withUnsafeGuaranteedRef { $0.schedule(self) }
    }

    /// The scheduler has shut down and will never run this cell again (it was still queued,
    /// or work arrived late, or a turn outlived the shutdown timeout). The caller holds the
    /// cell exclusively, like a turn: stop it (postStop runs, watchers and the parent are
    /// told), drop system messages, dead-letter every message, leave the registry.
    override final func runAfterShutdown() {
        let previousTurn = enterTurn()  // exclusive, like a turn (TurnConfinement T1)
        defer { leaveTurn(previousTurn) }
        if let systemQueue {
            while systemQueue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }, { message in
                switch message {
                case .watch, .unwatch, .observe:
                    // Told now if stopped, else kept: the stop below (or the body's end, for
                    // a sequential actor still running) tells them.
                    handleSystem(message)
                default:
                    break
                }
            }) == .more { sched_yield() }
        }
        finishAfterShutdown()
    }

    /// The typed half of `runAfterShutdown` (mailbox, stash, body).
    func finishAfterShutdown() {}

    /// Leaves the registry once (stopped, and every message accounted for).
    final func leaveRegistry() {
        guard !leftRegistry else { return }
        leftRegistry = true
        system.cellTerminated(self)
    }

    /// True when system messages wait (two loads): checked before each user message.
    @inlinable @inline(__always) final var hasSystemWork: Bool {
        guard let queue = systemQueueStorage.load(ordering: .acquiring) else { return false }
        return Unmanaged<MPSCQueue>.fromOpaque(queue)._withUnsafeGuaranteedRef { $0.hasPendingWork }
    }

    /// Whether a turn should be taken for system messages only (stopped cells).
    final func drainSystem() -> MPSCQueue.DrainOutcome {
        guard let systemQueue, systemQueue.hasPendingWork else { return .empty }
        return systemQueue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }) { handleSystem($0) }
    }

    final func handleSystem(_ message: SystemMessage) {
        switch message {
        case .stop(let mode, let reason):
            switch phase {
            case .stopped: return
            case .draining where mode == .afterDrainingMailbox: return
            default: break
            }
            if mode == .immediately || isCreated {
                finalizeStop(reason)
            } else {
                closeMailbox()
                phase = .draining(reason)
            }
        case .watch(let watcher):
            if let termination {
                watcher.sendSystem(.terminated(termination))
            } else {
                watchers[watcher.id] = watcher
            }
        case .unwatch(let watcherID):
            watchers[watcherID] = nil
        case .terminated(let t):
            children[t.id] = nil
            if !isStopped { handleTerminated(t); finishPendingStop() }
        case .childFailed(let failure):
            if !isStopped { handleFailure(failure); finishPendingStop() }
        case .observe(let observer):
            if let termination { observer.fire(termination) } else { observers.append(observer) }
        }
    }

    /// Runs preStart on the first turn (spawn schedules the cell; no message needed).
    final func startIfNeeded() {
        guard isCreated else { return }
        phase = .running
        do { try startInstance() } catch { handleFailure(error) }
        finishPendingStop()
    }

    /// Applies the supervisor's directive to a failure of this cell's behaviour.
    /// Every decision is logged with the error (`context.log`'s metadata plus
    /// `supervisor/directive`): resume at debug, restart at warning, stop and escalate at
    /// error. Failures are not the hot path; a behaviour that throws on every message logs
    /// on every message, which is what its supervisor chose.
    @usableFromInline final func handleFailure(_ error: any Error) {
        let described = String(describing: error)
        switch supervisor.decide(error) {
        case .resume:
            logger.debug("actor failed; supervisor resumes it",
                         metadata: ["error": "\(described)", "supervisor/directive": "resume"])
            return
        case .restart:
            if restartBudget.allowRestart(supervisor) {
                system.counters.restarts.wrappingAdd(1, ordering: .relaxed)
                logger.warning("actor failed; supervisor restarts it",
                               metadata: ["error": "\(described)", "supervisor/directive": "restart"])
                stopInstance()
                stopChildrenForRestart()
                resetBehaviourState()
                do { try startInstance() } catch {
                    logger.error("actor failed again in preStart after a restart; supervisor stops it",
                                 metadata: ["error": "\(error)", "supervisor/directive": "stop"])
                    pendingStop = .failed(String(describing: error))
                }
            } else {
                logger.error("actor failed with no restarts left (\(supervisor.maxRestarts) within \(supervisor.window)); supervisor stops it",
                             metadata: ["error": "\(described)", "supervisor/directive": "stop"])
                pendingStop = .failed(described)
            }
        case .stop:
            logger.error("actor failed; supervisor stops it",
                         metadata: ["error": "\(described)", "supervisor/directive": "stop"])
            pendingStop = .failed(described)
        case .escalate:
            logger.error("actor failed; supervisor stops it and escalates to its parent",
                         metadata: ["error": "\(described)", "supervisor/directive": "escalate"])
            pendingStop = .failed(described)
            parent?.sendSystem(.childFailed(ChildFailedError(child: id, childName: name, underlying: described)))
        }
    }

    /// A restart stops the children of the failed instance (as Akka's default preRestart
    /// does) and frees their names at once, so the fresh instance's preStart can spawn
    /// children under the same names while the old ones drain (their queued messages
    /// become dead letters).
    final func stopChildrenForRestart() {
        guard extrasStorage != nil, !children.isEmpty else { return }
        for child in children.values {
            system.releaseName(of: child)
            child.stopForParentRestart()
        }
        children = [:]
    }

    /// Stops this cell because its parent restarts (ActorCellBase: at once, per message).
    func stopForParentRestart() { sendSystem(.stop(.immediately, .stopped)) }

    /// Runs a stop requested during a message or a hook, once that code has returned.
    @usableFromInline final func finishPendingStop() {
        if let reason = pendingStop {
            pendingStop = nil
            finalizeStop(reason)
        }
    }

    /// Stops the cell: closes the mailbox (later sends → dead letters), stops children,
    /// runs postStop, tells watchers and the parent, leaves the registry. Messages still in
    /// the mailbox are dead-lettered by the current and later turns. Idempotent.
    /// The name is freed first (before anyone is told), so a watcher or an awaiting task
    /// that spawns a successor under the same name never meets ``ActorSystemError/duplicateName(_:)``.
    final func finalizeStop(_ reason: TerminationReason) {
        guard !isStopped else { return }
        let wasStarted = !isCreated
        phase = .stopped
        if case .failed = reason { system.counters.failedStops.wrappingAdd(1, ordering: .relaxed) }
        system.releaseName(of: self)
        closeMailbox()
        for child in children.values { child.sendSystem(.stop(.immediately, .stopped)) }
        if wasStarted { stopInstance() }
        resetBehaviourState()
        let t = Terminated(id: id, name: name, reason: reason)
        termination = t
        for watcher in watchers.values { watcher.sendSystem(.terminated(t)) }
        if extrasStorage != nil {
            for observer in observers { observer.fire(t) }
            watchers = [:]; children = [:]; observers = []
        }
        parent?.sendSystem(.terminated(t))
        releaseInstance()
    }

    /// A stopped cell drops the behaviour's instance and factory, so refs they held (to
    /// other actors, to the system) no longer keep anything alive: the cell is a stub.
    func releaseInstance() {}

    // MARK: counts of the user mailbox (any thread; snapshots)

    /// Messages ever accepted by the user mailbox (taken out + still inside).
    final var acceptedCount: Int {
        userQueue.map { $0.dequeuedCount + $0.approximateCount } ?? 0
    }
    /// The same when the cell leaves the registry (drained: taken out only; a message still
    /// being inserted then is counted when it is dead-lettered).
    final var retiredAcceptedCount: Int { userQueue?.dequeuedCount ?? 0 }
    /// Sends that went to the user mailbox's overflow list.
    final var overflowCount: Int { userQueue?.overflowAppends ?? 0 }

    // MARK: overridden by ActorCellBase / ActorCell / SequentialActorCell

    /// The user mailbox (nil for cells without one: a pool's router).
    var userQueue: MPSCQueue? { nil }
    /// Closes the user mailbox (thread-safe; idempotent).
    func closeMailbox() {}
    /// Messages accepted and not yet delivered or dead-lettered: the mailbox, plus stashed
    /// or buffered ones (a snapshot; shutdown reports it as `left`).
    var userMailboxDepth: Int { 0 }
    /// preStart on a (fresh) instance.
    func startInstance() throws {}
    /// postStop on the current instance.
    func stopInstance() {}
    /// Drop become stack and stash (restart, stop).
    func resetBehaviourState() {}
    /// A watched actor terminated: deliver the watch message or signal.
    func handleTerminated(_ t: Terminated) {}
    /// The strategy this cell's children get (its behaviour's supervisorStrategy).
    @usableFromInline var childSupervisor: SupervisorStrategy { system.defaultSupervisor }
}
