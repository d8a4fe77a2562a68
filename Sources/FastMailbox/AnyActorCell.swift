// AnyActorCell: the untyped part of every actor. It holds identity, lifecycle, the system
// queue, children and watchers. ActorCellBase adds the typed mailbox and behaviour.
//
// Confinement rules (why `@unchecked Sendable` is sound):
//  (C1) `let` fields never change after init.
//  (C2) every `var` is touched only inside this cell's turns. The scheduler never runs a
//       unit on two workers at once and orders successive turns (ScheduledUnit.swift,
//       R2). Debug builds check this where user code holds an ActorContext
//       (TurnConfinement.swift).
//  (C3) other threads reach a cell only through thread-safe entry points: the MPSCQueues
//       (user mailbox, system queue), atomics and scheduling.
//
// The cell is its own user mailbox's MPSCQueue, so a spawn allocates one object. Phase,
// reason and pending stop live in `lifecycle` and change only through `advance`
// (ActorLifecycle.swift). Rarely used state lives in side objects made on demand:
// `SpawnInfo` (what spawn was given beyond the defaults) and `Extras` (turn state).
// A stop from outside travels in the system-queue word itself (`StopWord`, S1–S3).
// The layout and its reasons: FastMailbox.docc/ActorCells.md, "One object per actor".

import Logging
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline
class AnyActorCell: MPSCQueue, RecipientIdentity, @unchecked Sendable {
    @usableFromInline enum Phase: Equatable, Sendable { case created, running, draining(TerminationReason), stopped }
    /// `Phase` without its payload: one byte.
    @usableFromInline typealias PhaseCode = ActorLifecycle.Phase
    /// A `TerminationReason` in one byte; `.failed`'s text lives in `Extras`.
    @usableFromInline typealias ReasonCode = ActorLifecycle.Reason
    /// What a cell is from its spawn on (immutable, C1).
    @usableFromInline struct Traits: OptionSet, Sendable {
        @usableFromInline let rawValue: UInt8
        @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }
        /// A bounded mailbox: `SpawnInfo.waiters` holds its waiting senders.
        @inlinable static var bounded: Traits { Traits(rawValue: 1 << 1) }  // computed: a constant when inlined
        /// The user mailbox's messages travel boxed (MessageEncoding).
        @inlinable static var boxed: Traits { Traits(rawValue: 1 << 2) }
        /// `.stop` from outside may travel in `systemQueueStorage` itself (StopWord).
        @inlinable static var stopWord: Traits { Traits(rawValue: 1 << 3) }
        /// Spawn was given a parent and nothing else: `spawnStorage` is the parent cell.
        static let parentOnly = Traits(rawValue: 1 << 4)
    }

    // Layout: the one-byte fields share a word right after MPSCQueue's fields. Keep bytes
    // first and words after.

    /// Phase, reason and pending stop, changed only by `advance`. Turn-confined fields are
    /// `@exclusivity(unchecked)`: C2 already rules out overlapping accesses.
    @exclusivity(unchecked) @usableFromInline final private(set) var lifecycle = ActorLifecycle()
    /// True once the registry maps this cell's name to it. Written under the registry lock
    /// before the cell can run, never cleared, so `releaseName` may read it without the lock.
    @exclusivity(unchecked) var holdsRegisteredName = false
    /// Set by the turn that found the stopped cell drained and left the registry.
    @exclusivity(unchecked) final var leftRegistry = false
    /// The instance ran preStart once, so the next start is a restart.
    @exclusivity(unchecked) final var instanceStarted = false
    @usableFromInline let traits: Traits

    @usableFromInline let id: ActorID
    @usableFromInline let system: ActorSystem
    /// Lifecycle traffic: a retained MPSCQueue of SystemMessage, made by the first system
    /// message and installed by CAS (the loser releases its own). Before that, a `.stop`
    /// from outside may travel in this word (`StopWord`).
    @usableFromInline let systemQueueStorage = Atomic<UnsafeMutableRawPointer?>(nil)
    #if DEBUG
    /// The thread running this cell's turn, 0 outside turns (TurnConfinement T1).
    let turnThread = Atomic<UInt>(0)
    #endif

    /// What spawn was given beyond the defaults; nil for most actors. Immutable (C1).
    final class SpawnInfo {
        /// The name given at spawn (nil: `$<id>`).
        let name: String?
        /// The parent cell (nil for top-level actors). The parent drops the child when it
        /// terminates.
        let parent: AnyActorCell?
        /// The strategy for this cell's failures, when not the system's default.
        let supervisor: SupervisorStrategy?
        /// A bounded mailbox's BoundedMailboxWaiters<Message>.
        let waiters: AnyObject?

        init(name: String?, parent: AnyActorCell?, supervisor: SupervisorStrategy?, waiters: AnyObject?) {
            self.name = name
            self.parent = parent
            self.supervisor = supervisor
            self.waiters = waiters
        }
    }
    /// nil, the parent cell (trait `.parentOnly`), or a SpawnInfo. Immutable.
    @usableFromInline let spawnStorage: AnyObject?
    @inline(__always) final var spawnInfo: SpawnInfo? {
        guard let storage = spawnStorage, !traits.contains(.parentOnly) else { return nil }
        return unsafeDowncast(storage, to: SpawnInfo.self)
    }

    /// The phase's case: one byte load. Turn-confined (C2), like the next ones.
    @inlinable @inline(__always) final var phaseCode: PhaseCode { lifecycle.phase }
    /// Why the cell is draining or stopped (`.none` before).
    final var reasonCode: ReasonCode { lifecycle.reason }
    /// The stop requested during a message or hook (`.none`: none).
    @inlinable @inline(__always) final var pendingStopCode: ReasonCode { lifecycle.pending }

    /// The phase, payload included.
    @usableFromInline final var phase: Phase {
        @inline(__always) get {
            switch phaseCode {
            case .created: .created
            case .running: .running
            case .draining: drainingPhase()
            case .stopped: .stopped
            }
        }
    }
    @inline(never) private final func drainingPhase() -> Phase { .draining(phaseReason) }
    /// `isStopped` without the synthesized `==` of an enum with a payload.
    @inlinable @inline(__always) final var isStopped: Bool { if case .stopped = phaseCode { true } else { false } }
    /// `isCreated`, likewise.
    @inlinable @inline(__always) final var isCreated: Bool { if case .created = phaseCode { true } else { false } }

    /// Why the cell is draining or stopped (valid in those phases).
    final var phaseReason: TerminationReason { decode(reasonCode, failure: extrasStorage?.phaseFailure) }

    /// A stop requested during a message or hook, run once that code has returned. The
    /// check is a one-byte pattern match, small for the inliner.
    @inlinable final var pendingStop: TerminationReason? {
        @inline(__always) get {
            if case .none = pendingStopCode { return nil }
            return pendingStopReason
        }
    }
    @usableFromInline @inline(never) final var pendingStopReason: TerminationReason {
        decode(pendingStopCode, failure: extrasStorage?.pendingFailure)
    }

    /// Moves the lifecycle along `event` by ActorLifecycle's table: the only way phase,
    /// reason and pending stop change. Does `.drain` and `.finalize` itself; the caller
    /// does `.start` and `.restart`. An illegal transition asserts in debug builds and
    /// changes nothing in release builds.
    @discardableResult @inline(__always)
    final func advance(_ event: ActorLifecycle.Event, _ reason: TerminationReason? = nil) -> ActorLifecycle.Effect {
        let phaseBefore = lifecycle.phase
        // An ignored event writes nothing, so a stopped cell's lifecycle never changes (L1).
        if case .ignored? = ActorLifecycle.transition(phaseBefore, event)?.effect { return .ignored }
        guard let (effect, text) = lifecycle.apply(event, reason: reason.map(ActorLifecycle.Reason.init) ?? .none) else {
            assertionFailure("illegal lifecycle transition: event \(event) in phase \(phaseBefore) (see ActorLifecycle.swift)")
            return .ignored
        }
        switch text {
        case .none: break
        case .eventToReason: if case .failed(let failure)? = reason { extras.phaseFailure = failure }
        case .pendingToReason: extras.phaseFailure = extrasStorage?.pendingFailure
        case .eventToPending: if case .failed(let failure)? = reason { extras.pendingFailure = failure }
        }
        switch effect {
        case .drain: closeMailbox()
        case .finalize(let postStop): finalizeStop(postStop: postStop)
        case .ignored, .start, .record, .restart: break
        }
        return effect
    }

    private final func decode(_ code: ReasonCode, failure: String?) -> TerminationReason {
        switch code {
        case .none, .stopped: .stopped
        case .systemShutDown: .systemShutDown
        case .finished: .finished
        case .failed: .failed(failure ?? "")
        }
    }

    /// Turn state most actors never use, allocated on first use. Turn-confined (C2).
    /// ActorCellBase subclasses it with its typed state, so a cell has one side object.
    @usableFromInline class Extras {
        @usableFromInline init() {}

        @exclusivity(unchecked) final var children: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) final var watchers: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) final var restartBudget = RestartBudget()
        /// The text of a `.failed` reason or pending stop.
        @exclusivity(unchecked) final var phaseFailure: String?
        @exclusivity(unchecked) final var pendingFailure: String?
        /// `await ref.terminated` callers, resumed when the cell stops.
        @exclusivity(unchecked) final var observers: [TerminationObserver] = []
        /// `context.log`, built on first use.
        @exclusivity(unchecked) final var logger: Logger?
        /// A back-off restart waits for its delay (AnyActorCell+Backoff.swift): the turn hands no
        /// message to the behaviour until it ends.
        @exclusivity(unchecked) @usableFromInline final var restartPending = false { didSet { updateOffFastPath() } }
        /// The back-off restarts' count, generator and pending timer (AnyActorCell+Backoff.swift).
        @exclusivity(unchecked) final var backoff: BackoffState?
        /// Keeps a per-message fast-path flag in step (ActorCellBase.TypedExtras).
        func updateOffFastPath() {}
    }
    /// Nil until a turn needs it.
    @exclusivity(unchecked) @usableFromInline final var extrasStorage: Extras?
    final var extras: Extras {
        if let extrasStorage { return extrasStorage }
        let fresh = makeExtras()
        extrasStorage = fresh
        return fresh
    }
    func makeExtras() -> Extras { Extras() }
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
    final var observers: [TerminationObserver] {
        get { extrasStorage?.observers ?? [] }
        _modify { yield &extras.observers }
    }
    /// The actor's end, once stopped, built when read: a stop nobody watches builds none.
    final var termination: Terminated? {
        isStopped ? Terminated(id: id, name: name, reason: phaseReason) : nil
    }

    /// The name given at spawn, else `$<id>`, formatted when read. Any thread.
    final var name: String {
        if let name = spawnInfo?.name { return name }
        return "$\(id.rawValue)"
    }
    final var parent: AnyActorCell? {
        if traits.contains(.parentOnly) { return unsafeDowncast(spawnStorage.unsafelyUnwrapped, to: AnyActorCell.self) }
        return spawnInfo?.parent
    }
    /// The strategy that decides about this cell's failures.
    final var supervisor: SupervisorStrategy { spawnInfo?.supervisor ?? system.defaultSupervisor }

    /// The system's logger with `actor/id` and `actor/name`, built on first use. Turn only.
    final var logger: Logger {
        if let logger = extrasStorage?.logger { return logger }
        var logger = system.logger
        logger[metadataKey: "actor/id"] = "\(id.rawValue)"
        logger[metadataKey: "actor/name"] = "\(name)"
        extras.logger = logger
        return logger
    }

    /// `name` nil: `$<id>`. `supervisor` nil: the system's default. A SpawnInfo is made
    /// only if something differs from the defaults. Parameters are `__shared`: the caller
    /// holds them anyway, so no retain/release pair.
    @usableFromInline
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, traits: Traits = [], waiters: AnyObject? = nil) {
        self.id = id
        self.system = system
        if _fastPath(name == nil && parent == nil && supervisor == nil && waiters == nil) {
            spawnStorage = nil
            self.traits = traits
        } else {
            var traits = traits
            if waiters != nil { traits.insert(.bounded) }
            var customSupervisor: SupervisorStrategy? = nil
            if let supervisor, !supervisor.sharesStorage(with: system.defaultSupervisor) { customSupervisor = supervisor }
            if name == nil, customSupervisor == nil, waiters == nil, let parent {
                traits.insert(.parentOnly)
                spawnStorage = parent
            } else if name != nil || parent != nil || customSupervisor != nil || waiters != nil {
                spawnStorage = SpawnInfo(name: name, parent: parent, supervisor: customSupervisor, waiters: waiters)
            } else {
                spawnStorage = nil
            }
            self.traits = traits
        }
        super.init(shape: mailbox)
    }

    /// The common spawn's init: nothing beyond the defaults. Inlinable, so a spawn builds
    /// the cell with constant arguments.
    @inlinable
    init(id: ActorID, system: __shared ActorSystem, mailbox: MPSCQueue.Shape, traits: Traits) {
        self.id = id
        self.system = system
        spawnStorage = nil
        self.traits = traits
        super.init(shape: mailbox)
    }

    deinit {
        // Release the system queue; its deinit releases the messages nobody drained.
        if let raw = systemQueueStorage.load(ordering: .acquiring), !StopWord.isWord(raw) {
            Unmanaged<MPSCQueue>.fromOpaque(raw).release()
        }
    }

    /// A `.stop` from outside (reason `.stopped` or `.systemShutDown`), held in
    /// `systemQueueStorage` while the cell has no system queue. It is an odd bit pattern; a
    /// queue's address is 16-byte aligned. So stopping an actor that never got another
    /// system message allocates nothing.
    /// Rules:
    ///  (S1) only a sender installs a word, by CAS from nil, and then schedules the cell.
    ///  (S2) only a turn (`drainSystem`) or `runAfterShutdown` removes it, by CAS to nil,
    ///       and handles it as the queued message it stands for.
    ///  (S3) a sender that needs a queue while a word is held makes one with that stop
    ///       already in it and swaps it in by CAS, so the stop stays ahead of later messages.
    /// A word and a queue never coexist. An installed queue stays until deinit.
    @usableFromInline struct StopWord: Equatable {
        let mode: StopMode
        let reason: TerminationReason

        init?(_ mode: StopMode, _ reason: TerminationReason) {
            switch reason {
            case .stopped, .systemShutDown: break
            default: return nil
            }
            self.mode = mode
            self.reason = reason
        }

        /// The word in `systemQueueStorage`, nil when `raw` is a queue's address.
        init?(_ raw: UnsafeMutableRawPointer) {
            let bits = UInt(bitPattern: raw)
            guard bits & 1 != 0, bits != AnyActorCell.releaseRequestWord else { return nil }
            mode = bits & 2 != 0 ? .immediately : .afterDrainingMailbox
            reason = bits & 4 != 0 ? .systemShutDown : .stopped
        }

        var raw: UnsafeMutableRawPointer {
            let bits: UInt = 1 | (mode == .immediately ? 2 : 0) | (reason == .systemShutDown ? 4 : 0)
            return UnsafeMutableRawPointer(bitPattern: bits).unsafelyUnwrapped
        }

        var message: SystemMessage { .stop(mode, reason) }

        @inlinable @inline(__always) static func isWord(_ raw: UnsafeMutableRawPointer) -> Bool {
            UInt(bitPattern: raw) & 1 != 0
        }
    }

    /// The release request (ActorSystem+Reclaim): another odd word for the system slot,
    /// asking the next general turn to give the mailbox's ring back if it drains empty.
    /// Installed by CAS from nil, then the cell is scheduled (as S1); removed by the turn.
    /// A sender that needs the slot CASes it away, dropping the request.
    static let releaseRequestWord: UInt = 9

    /// Asks the cell to give its ring back at its next turn (the walker, under the registry
    /// lock). False when the slot holds a stop or a pending request.
    final func requestMailboxRelease() -> Bool {
        let word = UnsafeMutableRawPointer(bitPattern: AnyActorCell.releaseRequestWord).unsafelyUnwrapped
        let (installed, seen) = systemQueueStorage.compareExchange(expected: nil, desired: word, ordering: .acquiringAndReleasing)
        if installed {
            scheduleSelf()
            return true
        }
        // An installed queue stays until deinit (S1–S3): enqueue into it.
        guard let raw = seen, !StopWord.isWord(raw) else { return false }
        let queue = Unmanaged<MPSCQueue>.fromOpaque(raw).takeUnretainedValue()
        if case (.accepted(true), _) = MessageEncoding<SystemMessage>.enqueue(.releaseMailboxRing, into: queue) {
            scheduleSelf()
        }
        return true
    }

    /// Takes a pending release request (a turn).
    final func takeReleaseRequest() -> Bool {
        guard let raw = systemQueueStorage.load(ordering: .acquiring),
              UInt(bitPattern: raw) == AnyActorCell.releaseRequestWord else { return false }
        return systemQueueStorage.compareExchange(expected: raw, desired: nil, ordering: .acquiringAndReleasing).exchanged
    }

    final var systemQueue: MPSCQueue? {
        guard let raw = systemQueueStorage.load(ordering: .acquiring), !StopWord.isWord(raw) else { return nil }
        return Unmanaged<MPSCQueue>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The installed system queue, made now if there is none (S3).
    private final func makeSystemQueue() -> MPSCQueue {
        var current = systemQueueStorage.load(ordering: .acquiring)
        while true {
            if let raw = current, !StopWord.isWord(raw) { return Unmanaged<MPSCQueue>.fromOpaque(raw).takeUnretainedValue() }
            let queue = try! MessageEncoding<SystemMessage>.makeQueue(capacity: 4)
            if let raw = current, let word = StopWord(raw) {
                _ = MessageEncoding<SystemMessage>.enqueue(word.message, into: queue)  // private until the CAS
            }
            let fresh = Unmanaged.passRetained(queue)
            let (won, seen) = systemQueueStorage.compareExchange(
                expected: current, desired: fresh.toOpaque(), successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if won {
                if current != nil { scheduleSelf() }  // carried a stop (S1); harmless (R1)
                return queue
            }
            fresh.release()  // the loser's queue, with its copy of the stop
            current = seen
        }
    }

    /// Enqueues a system message from any thread and schedules the cell if needed.
    final func sendSystem(_ message: SystemMessage) {
        if traits.contains(.stopWord), case .stop(let mode, let reason) = message, let word = StopWord(mode, reason),
           systemQueueStorage.compareExchange(expected: nil, desired: word.raw, ordering: .acquiringAndReleasing).exchanged {
            scheduleSelf()  // S1
            return
        }
        let queue = systemQueue ?? makeSystemQueue()
        if case (.accepted(true), _) = MessageEncoding<SystemMessage>.enqueue(message, into: queue) {
            scheduleSelf()
        }
    }

    /// Takes a held stop word (S2), or nil.
    private final func takeStopWord() -> SystemMessage? {
        guard let raw = systemQueueStorage.load(ordering: .acquiring), let word = StopWord(raw),
              systemQueueStorage.compareExchange(expected: raw, desired: nil, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        return word.message
    }

    /// Makes the cell runnable. After shutdown the scheduler calls `runAfterShutdown`.
    @inlinable @inline(__always) final func scheduleSelf() {
        // Cell → system → scheduler are `let`s: no retain. A registered cell has its owner
        // bit set (ScheduledUnit.swift, "Lifetime"), so the first CAS guesses that.
        Unmanaged.passUnretained(system.scheduler)._withUnsafeGuaranteedRef { scheduleOwned(on: $0) }
    }

    /// The scheduler has shut down and will never run this cell again. The caller holds
    /// the cell exclusively, like a turn: stop it, drop system messages, dead-letter every
    /// message, leave the registry.
    override final func runAfterShutdown() {
        let previousTurn = enterTurn()  // exclusive, like a turn (TurnConfinement T1)
        defer { leaveTurn(previousTurn) }
        _ = takeStopWord()  // dropped like a queued stop: the stop below counts
        if let systemQueue {
            while systemQueue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }, { message in
                switch message {
                case .watch, .unwatch, .observe:
                    // Told now if stopped; else the stop below tells them.
                    handleSystem(message)
                default:
                    break
                }
            }) == .more { sched_yield() }
        }
        finishAfterShutdown()
    }

    /// The typed half of `runAfterShutdown`.
    func finishAfterShutdown() {}

    /// Leaves the registry once: stopped, and every message accounted for.
    final func leaveRegistry() {
        guard !leftRegistry else { return }
        leftRegistry = true
        system.cellTerminated(self)
    }

    /// True when system messages wait (two loads). Checked before each user message.
    @inlinable @inline(__always) final var hasSystemWork: Bool {
        guard let raw = systemQueueStorage.load(ordering: .acquiring) else { return false }
        if StopWord.isWord(raw) { return true }
        return Unmanaged<MPSCQueue>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.flagSaysPending }
    }

    /// Drains the system queue (stopped cells).
    final func drainSystem() -> MPSCQueue.DrainOutcome {
        var releaseRequested = false
        return drainSystem(releaseRequested: &releaseRequested)
    }

    /// `drainSystem()`, noting a `.releaseMailboxRing` for the general turn.
    final func drainSystem(releaseRequested: inout Bool) -> MPSCQueue.DrainOutcome {
        if let stop = takeStopWord() { handleSystem(stop) }  // S2
        guard let systemQueue, systemQueue.flagSaysPending else { return .empty }
        return systemQueue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }) { message in
            if case .releaseMailboxRing = message { releaseRequested = true } else { handleSystem(message) }
        }
    }

    final func handleSystem(_ message: SystemMessage) {
        switch message {
        case .stop(let mode, let reason):
            advance(mode == .immediately ? .stopImmediately : .stopAfterDrain, reason)
        case .watch(let watcher):
            if let termination {
                watcher.sendSystem(.terminated(termination))
            } else {
                watchers[watcher.id] = watcher
            }
        case .unwatch(let watcherID):
            if extrasStorage != nil { watchers[watcherID] = nil }
        case .terminated(let t):
            children[t.id] = nil
            if !isStopped { handleTerminated(t); finishPendingStop() }
        case .childFailed(let failure):
            if !isStopped { handleFailure(failure); finishPendingStop() }
        case .observe(let observer):
            if let termination { observer.fire(termination) } else { observers.append(observer) }
        case .releaseMailboxRing:
            break  // only the general turn acts on it
        case .timerFired(let event):
            if !isStopped { event.fire(in: self); finishPendingStop() }
        }
    }

    /// Starts a cell whose preStart needs no turn, before it is registered or scheduled.
    final func startWithoutTurn() {
        advance(.start)
        instanceStarted = true
    }

    /// Runs preStart on the first turn.
    final func startIfNeeded() {
        guard isCreated else { return }
        advance(.start)
        do { try startInstance() } catch { handleFailure(error) }
        finishPendingStop()
    }

    /// Applies the supervisor's directive to a failure, logging it: resume at debug,
    /// restart at warning, stop and escalate at error. Under a back-off strategy the fresh
    /// instance starts when the delay ends (AnyActorCell+Backoff.swift).
    @usableFromInline final func handleFailure(_ error: any Error) {
        // A failure while a back-off restart is pending (a child of the failed instance
        // escalating) changes nothing: that instance is gone and the restart under way.
        if let extras = extrasStorage, extras.restartPending { return }
        let described = String(describing: error)
        switch supervisor.decide(error) {
        case .resume:
            logger.debug("actor failed; supervisor resumes it",
                         metadata: ["error": "\(described)", "supervisor/directive": "resume"])
            return
        case .restart:
            if restartBudget.allowRestart(supervisor) {
                system.counters.restarts.wrappingAdd(1, ordering: .relaxed)
                advance(.restart)
                logger.warning("actor failed; supervisor restarts it",
                               metadata: ["error": "\(described)", "supervisor/directive": "restart"])
                stopInstance()
                stopChildrenForRestart()
                resetBehaviourState()
                if let backoff = supervisor.backoff {
                    beginBackoff(backoff)  // the fresh instance starts when the delay ends
                } else {
                    startRestartedInstance()
                }
            } else {
                logger.error("actor failed with no restarts left (\(supervisor.maxRestarts) within \(supervisor.window)); supervisor stops it",
                             metadata: ["error": "\(described)", "supervisor/directive": "stop"])
                advance(.stopFromInside, .failed(described))
            }
        case .stop:
            logger.error("actor failed; supervisor stops it",
                         metadata: ["error": "\(described)", "supervisor/directive": "stop"])
            advance(.stopFromInside, .failed(described))
        case .escalate:
            logger.error("actor failed; supervisor stops it and escalates to its parent",
                         metadata: ["error": "\(described)", "supervisor/directive": "escalate"])
            advance(.stopFromInside, .failed(described))
            parent?.sendSystem(.childFailed(ChildFailedError(child: id, childName: name, underlying: described)))
        }
    }

    /// Starts the fresh instance of a restart (preStart); a failure there stops the actor.
    final func startRestartedInstance() {
        do { try startInstance() } catch {
            logger.error("actor failed again in preStart after a restart; supervisor stops it",
                         metadata: ["error": "\(error)", "supervisor/directive": "stop"])
            advance(.stopFromInside, .failed(String(describing: error)))
        }
    }

    /// A restart stops the old instance's children and frees their names at once, so the
    /// new preStart can reuse them. Their queued messages become dead letters.
    final func stopChildrenForRestart() {
        guard extrasStorage != nil, !children.isEmpty else { return }
        for child in children.values {
            system.releaseName(of: child)
            child.stopImmediately()
        }
        children = [:]
    }

    /// Stops this cell at once, from outside its turns (a parent's restart, shutdown's
    /// timeout). A Router does nothing: a pool stops once its routees have.
    func stopImmediately() { sendSystem(.stop(.immediately, .stopped)) }

    @usableFromInline final func finishPendingStop() {
        guard pendingStopCode != .none else { return }
        advance(.pendingStopDue)
    }

    /// The stop, run once (ActorLifecycle L2). Frees the name first, so a watcher may reuse
    /// it. Then closes the mailbox, stops children, runs postStop if the actor started,
    /// and tells watchers and the parent. Later turns dead-letter what is left.
    private final func finalizeStop(postStop: Bool) {
        let reason = phaseReason
        if case .failed = reason { system.counters.failedStops.wrappingAdd(1, ordering: .relaxed) }
        system.releaseName(of: self)
        closeMailbox()
        if let extras = extrasStorage {
            // At once, so their waiting senders get their messages back now.
            for child in extras.children.values { child.stopImmediately() }
        }
        if postStop, extrasStorage == nil || !cancelPendingRestart() { stopInstance() }  // a pending restart's postStop ran
        resetBehaviourState()
        // Built only when someone is told.
        if let extras = extrasStorage {
            if !extras.watchers.isEmpty || !extras.observers.isEmpty {
                let t = Terminated(id: id, name: name, reason: reason)
                for watcher in extras.watchers.values { watcher.sendSystem(.terminated(t)) }
                for observer in extras.observers { observer.fire(t) }
            }
            extras.watchers = [:]; extras.children = [:]; extras.observers = []
        }
        if let parent { parent.sendSystem(.terminated(Terminated(id: id, name: name, reason: reason))) }
        releaseInstance()
    }

    /// Drops the instance and factory, so what they captured keeps nothing alive.
    func releaseInstance() {}

    /// Gives the idle ring back, as a walk asked (the mailbox's consumer only). Overflow
    /// sends counted in a list given back join the system's retired count.
    @inline(never)
    final func releaseMailboxRing() {
        var overflows = 0
        guard releaseIdleRing(overflowAppends: &overflows) else { return }
        system.counters.retiredOverflows.wrappingAdd(overflows, ordering: .relaxed)
        system.counters.mailboxRingsReleased.wrappingAdd(1, ordering: .relaxed)
    }

    // MARK: counts of the user mailbox (any thread; snapshots; 0 for a router)

    /// Messages ever accepted: taken out plus still inside.
    final var acceptedCount: Int { dequeuedCount + approximateCount }
    /// The same when the cell leaves the registry, drained: taken out only.
    final var retiredAcceptedCount: Int { dequeuedCount }
    final var overflowCount: Int { overflowAppends }
    /// This cell's part of a shutdown report. The queued count is read once, so a message
    /// inserted meanwhile is in both `accepted` and `left` or in neither.
    final var reportFigures: (delivered: Int, accepted: Int, left: Int) {
        let queued = approximateCount
        return (deliveredCount, dequeuedCount &+ queued, queued &+ heldOutsideQueue)
    }

    /// Messages handed to the behaviour: a snapshot, exact once turns ended. Subclasses
    /// keep it in an atomic with one writer.
    var deliveredCount: Int { 0 }

    final var watchableCell: AnyActorCell? { self }

    /// Messages waiting. Overridden by every kind of cell.
    var mailboxDepth: Int { 0 }

    /// Asks the actor to stop. Overridden by every kind of cell.
    func stop(_ mode: StopMode) {
        preconditionFailure("AnyActorCell.stop(_:) must be overridden by \(type(of: self))")
    }

    // MARK: overridden by ActorCellBase / ActorCell / SequentialActorCell

    /// Closes the user mailbox (thread-safe; idempotent).
    func closeMailbox() {}
    /// Messages taken out and held outside the queue: a sequential actor's Inbox buffer.
    var heldOutsideQueue: Int { 0 }
    func startInstance() throws {}
    func stopInstance() {}
    /// Drops become stack and stash (restart, stop).
    func resetBehaviourState() {}
    func handleTerminated(_ t: Terminated) {}
    /// The strategy this cell's children get.
    @usableFromInline var childSupervisor: SupervisorStrategy { system.defaultSupervisor }
}
