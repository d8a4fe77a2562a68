// AnyActorCell: the untyped part of every actor: identity, lifecycle, system queue,
// children and watchers. ActorCellBase adds the typed mailbox and behaviour.
// `@unchecked Sendable` is sound because:
//  (C1) `let` fields never change after init.
//  (C2) every `var` is touched only in this cell's turns, which never overlap and are
//       ordered (UnitHeader.swift, R2); debug builds check it (TurnConfinement.swift).
//  (C3) other threads reach a cell only through its MPSCQueues, atomics and scheduling.
//  (E1) `Extras` is made on first use (under C2), published by a release store and never
//       replaced; another thread that acquires it reads only its atomics.
// Layout: <doc:ActorCells>, "One object per actor".

import Logging
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline
class AnyActorCell: ScheduledUnit, RecipientIdentity, @unchecked Sendable {
    @usableFromInline enum Phase: Equatable, Sendable { case created, running, draining(TerminationReason), stopped }
    /// `Phase` in one byte.
    @usableFromInline typealias PhaseCode = ActorLifecycle.Phase
    /// `TerminationReason` in one byte (`.failed`'s text is in `Extras`).
    @usableFromInline typealias ReasonCode = ActorLifecycle.Reason
    /// What a cell is from its spawn on (immutable, C1).
    @usableFromInline struct Traits: OptionSet, Sendable {
        @usableFromInline let rawValue: UInt8
        @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }
        /// A bounded mailbox (`SpawnInfo.waiters`).
        @inlinable static var bounded: Traits { Traits(rawValue: 1 << 1) }  // computed: a constant when inlined
        /// Messages travel boxed.
        @inlinable static var boxed: Traits { Traits(rawValue: 1 << 2) }
        /// A `.stop` may travel as a StopWord.
        @inlinable static var stopWord: Traits { Traits(rawValue: 1 << 3) }
        /// `spawnStorage` is the parent cell.
        static let parentOnly = Traits(rawValue: 1 << 4)
    }

    /// The scheduler's state for this cell (first: UnitHeader.swift, H1): the turn's code,
    /// then two bytes, which the six below fill to a word; then the queue (four words);
    /// then words.
    @usableFromInline let unitHeader: UnitHeader

    /// Every cell class's kind: the worker calls `runTurn`, which each cell class overrides,
    /// for a cell whose header keeps no turn of its own (ActorCellBase, A3).
    @usableFromInline static let unitKind = UnitKind.register(AnyActorCell.self) { entry, budget, worker in
        Unmanaged<AnyActorCell>.fromOpaque(entry)._withUnsafeGuaranteedRef {
            $0.runTurn(budget: budget, lingering: LingerPermit(worker: worker))
        }.rawValue
    }

    /// Changed only by `advance`. Turn-confined fields are `@exclusivity(unchecked)` (C2).
    @exclusivity(unchecked) @usableFromInline final private(set) var lifecycle = ActorLifecycle()
    /// Set under the registry lock before the cell can run, never cleared. A byte of its
    /// own: registry holders on other threads read it.
    @exclusivity(unchecked) var holdsRegisteredName = false
    /// `leftRegistry`, `instanceStarted` and the `TurnBit`s the common turn tests, one byte,
    /// turn-confined (C2). A cell is born created, so not running.
    @exclusivity(unchecked) @usableFromInline final private(set) var turnBits: UInt8 = TurnBit.notRunning
    @usableFromInline let traits: Traits

    /// The mailbox, inline ("One object per actor"). Its consumer is this cell's turn; an
    /// event actor's queue uses this unit's state word as its idle flag.
    @usableFromInline let queue: MPSCQueue

    /// The stopped cell drained and left the registry.
    final var leftRegistry: Bool {
        get { turnBits & 1 != 0 }
        set { turnBits = newValue ? turnBits | 1 : turnBits & ~1 }
    }
    /// preStart ran once: the next start is a restart.
    final var instanceStarted: Bool {
        get { turnBits & 2 != 0 }
        set { turnBits = newValue ? turnBits | 2 : turnBits & ~2 }
    }

    /// The common turn's conditions as bits of `turnBits`, so it tests them with one load:
    /// the phase's bits follow `lifecycle` (set in `advance`), the others follow the
    /// extras (`setTurnBit`).
    @usableFromInline enum TurnBit {
        /// The phase is not `.running`.
        @inlinable static var notRunning: UInt8 { 4 }
        /// The phase is `.stopped`.
        @inlinable static var stopped: UInt8 { 8 }
        /// Unstashed messages wait or a back-off restart is pending: the general turn.
        @inlinable static var generalTurn: UInt8 { 16 }
        /// A `become` behaviour is on top.
        @inlinable static var becoming: UInt8 { 32 }
        /// A stop asked for in a message waits for the turn to finish it.
        @inlinable static var stopPending: UInt8 { 64 }
    }

    /// Turn only (C2).
    final func setTurnBit(_ bit: UInt8, _ on: Bool) {
        turnBits = on ? turnBits | bit : turnBits & ~bit
    }

    @usableFromInline let id: ActorID
    @usableFromInline let system: ActorSystem
    /// A retained MPSCQueue of SystemMessage (installed by CAS), or a StopWord, or nil.
    @usableFromInline let systemQueueStorage = Atomic<UnsafeMutableRawPointer?>(nil)
    #if DEBUG
    /// TurnConfinement T1.
    let turnThread = Atomic<UInt>(0)
    #endif

    /// What spawn was given beyond the defaults; nil for most actors (C1).
    final class SpawnInfo {
        /// The name given at spawn (nil: `$<id>`).
        let name: String?
        /// nil at top level; the parent drops the child when it terminates.
        let parent: AnyActorCell?
        /// When not the system's default.
        let supervisor: SupervisorStrategy?
        /// BoundedMailboxWaiters<Message>.
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

    /// One byte load. Turn-confined (C2), like the next ones.
    @inlinable @inline(__always) final var phaseCode: PhaseCode { lifecycle.phase }
    /// `.none` before draining or stopped.
    final var reasonCode: ReasonCode { lifecycle.reason }
    /// `.none`: no stop requested.
    @inlinable @inline(__always) final var pendingStopCode: ReasonCode { lifecycle.pending }

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
    /// Without the synthesized `==` of an enum with a payload.
    @inlinable @inline(__always) final var isStopped: Bool { if case .stopped = phaseCode { true } else { false } }
    @inlinable @inline(__always) final var isCreated: Bool { if case .created = phaseCode { true } else { false } }

    /// Valid while draining or stopped.
    final var phaseReason: TerminationReason { decode(reasonCode, failure: extrasStorage?.phaseFailure) }

    /// Run once the message or hook has returned.
    @inlinable final var pendingStop: TerminationReason? {
        @inline(__always) get {
            if case .none = pendingStopCode { return nil }
            return pendingStopReason
        }
    }
    @usableFromInline @inline(never) final var pendingStopReason: TerminationReason {
        decode(pendingStopCode, failure: extrasStorage?.pendingFailure)
    }

    /// The only way phase, reason and pending stop change (ActorLifecycle's table). Does
    /// `.drain` and `.finalize`; the caller `.start` and `.restart`. An illegal transition
    /// asserts in debug builds and changes nothing.
    @discardableResult @inline(__always)
    final func advance(_ event: ActorLifecycle.Event, _ reason: TerminationReason? = nil) -> ActorLifecycle.Effect {
        let phaseBefore = lifecycle.phase
        // Ignored writes nothing (L1).
        if case .ignored? = ActorLifecycle.transition(phaseBefore, event)?.effect { return .ignored }
        guard let (effect, text) = lifecycle.apply(event, reason: reason.map(ActorLifecycle.Reason.init) ?? .none) else {
            assertionFailure("illegal lifecycle transition: event \(event) in phase \(phaseBefore) (see ActorLifecycle.swift)")
            return .ignored
        }
        setTurnBit(TurnBit.notRunning, lifecycle.phase != .running)
        setTurnBit(TurnBit.stopped, lifecycle.phase == .stopped)
        setTurnBit(TurnBit.stopPending, lifecycle.pending != .none)
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

    /// Turn state most actors never use (C2); ActorCellBase subclasses it.
    @usableFromInline class Extras {
        /// The cell that owns these extras, and outlives them.
        unowned(unsafe) let cell: AnyActorCell
        init(cell: AnyActorCell) { self.cell = cell }

        @exclusivity(unchecked) final var children: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) final var watchers: [ActorID: AnyActorCell] = [:]
        @exclusivity(unchecked) final var restartBudget = RestartBudget()
        /// A `.failed` reason's or pending stop's text.
        @exclusivity(unchecked) final var phaseFailure: String?
        @exclusivity(unchecked) final var pendingFailure: String?
        /// `await ref.terminated` callers.
        @exclusivity(unchecked) final var observers: [TerminationObserver] = []
        @exclusivity(unchecked) final var logger: Logger?
        /// No message reaches the behaviour until the back-off delay ends.
        @exclusivity(unchecked) @usableFromInline final var restartPending = false { didSet { updateTurnBits() } }
        @exclusivity(unchecked) final var backoff: BackoffState?
        /// Keeps the cell's `TurnBit`s in step with these extras.
        func updateTurnBits() {}
    }
    /// A retained `Extras`, or nil until first use. Never replaced once made, so it stays
    /// valid until deinit (E1); another thread that acquires it reads its atomics
    /// (`ActorCellBase.deliveredCount`).
    @usableFromInline let extrasWord = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Turn only (C2): the turn that made it, or an earlier one, published it.
    @inlinable final var extrasStorage: Extras? {
        @inline(__always) get {
            guard let raw = extrasWord.load(ordering: .relaxed) else { return nil }
            return Unmanaged<Extras>.fromOpaque(raw).takeUnretainedValue()
        }
    }
    /// Any thread: nil, or the extras with their initial values visible (E1).
    final var publishedExtras: Extras? {
        guard let raw = extrasWord.load(ordering: .acquiring) else { return nil }
        return Unmanaged<Extras>.fromOpaque(raw).takeUnretainedValue()
    }
    final var extras: Extras {
        if let extrasStorage { return extrasStorage }
        let fresh = makeExtras()
        extrasWord.store(Unmanaged.passRetained(fresh).toOpaque(), ordering: .releasing)
        return fresh
    }
    func makeExtras() -> Extras { Extras(cell: self) }
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
    /// Built when read: a stop nobody watches builds none.
    final var termination: Terminated? {
        isStopped ? Terminated(id: id, name: name, reason: phaseReason) : nil
    }

    /// Formatted when read (`$<id>` if unnamed). Any thread.
    final var name: String {
        if let name = spawnInfo?.name { return name }
        return "$\(id.rawValue)"
    }
    final var parent: AnyActorCell? {
        if traits.contains(.parentOnly) { return unsafeDowncast(spawnStorage.unsafelyUnwrapped, to: AnyActorCell.self) }
        return spawnInfo?.parent
    }
    final var supervisor: SupervisorStrategy { spawnInfo?.supervisor ?? system.defaultSupervisor }

    /// Built on first use. Turn only.
    final var logger: Logger {
        if let logger = extrasStorage?.logger { return logger }
        var logger = system.logger
        logger[metadataKey: "actor/id"] = "\(id.rawValue)"
        logger[metadataKey: "actor/name"] = "\(name)"
        extras.logger = logger
        return logger
    }

    /// `name` nil: `$<id>`; `supervisor` nil: the system's default. SpawnInfo only if
    /// something differs.
    @usableFromInline
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, traits: Traits = [], waiters: AnyObject? = nil,
         turn: UnitTurn? = nil) {
        unitHeader = UnitHeader(kind: AnyActorCell.unitKind, turn: turn)
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
        queue = MPSCQueue(shape: mailbox)
    }

    /// The common spawn's init.
    @inlinable
    init(id: ActorID, system: __shared ActorSystem, mailbox: MPSCQueue.Shape, traits: Traits, turn: UnitTurn?) {
        unitHeader = UnitHeader(kind: AnyActorCell.unitKind, turn: turn)
        self.id = id
        self.system = system
        spawnStorage = nil
        self.traits = traits
        queue = MPSCQueue(shape: mailbox)
    }

    deinit {
        // The system queue's deinit releases undrained messages.
        if let raw = systemQueueStorage.load(ordering: .acquiring), !StopWord.isWord(raw) {
            Unmanaged<MPSCQueueBox>.fromOpaque(raw).release()
        }
        if let raw = extrasWord.load(ordering: .relaxed) { Unmanaged<Extras>.fromOpaque(raw).release() }
    }

    /// A `.stop` from outside held in `systemQueueStorage` as an odd bit pattern (queue
    /// addresses are 16-byte aligned), so such a stop allocates nothing.
    ///  (S1) only a sender installs a word, by CAS from nil, then schedules the cell.
    ///  (S2) only a turn or `runAfterShutdown` removes it, by CAS to nil, and handles it.
    ///  (S3) a sender needing a queue while a word is held swaps in a queue holding that
    ///       stop, so it stays ahead of later messages.
    /// A word and a queue never coexist; an installed queue stays until deinit.
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

        /// nil when `raw` is a queue's address.
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

    /// The release request: an odd word asking the next general turn to give the ring
    /// back if it drains empty. Installed as S1; a sender needing the slot CASes it away.
    static let releaseRequestWord: UInt = 9

    /// False when the slot is taken.
    final func requestMailboxRelease() -> Bool {
        let word = UnsafeMutableRawPointer(bitPattern: AnyActorCell.releaseRequestWord).unsafelyUnwrapped
        let (installed, seen) = systemQueueStorage.compareExchange(expected: nil, desired: word, ordering: .acquiringAndReleasing)
        if installed {
            scheduleSelf()
            return true
        }
        // An installed queue stays until deinit (S1–S3).
        guard let raw = seen, !StopWord.isWord(raw) else { return false }
        let box = Unmanaged<MPSCQueueBox>.fromOpaque(raw).takeUnretainedValue()
        if case (.accepted(true), _) = MessageEncoding<SystemMessage>.enqueue(.releaseMailboxRing, into: box.queue) {
            scheduleSelf()
        }
        return true
    }

    final func takeReleaseRequest() -> Bool {
        guard let raw = systemQueueStorage.load(ordering: .acquiring),
              UInt(bitPattern: raw) == AnyActorCell.releaseRequestWord else { return false }
        return systemQueueStorage.compareExchange(expected: raw, desired: nil, ordering: .acquiringAndReleasing).exchanged
    }

    final var systemQueue: MPSCQueueBox? {
        guard let raw = systemQueueStorage.load(ordering: .acquiring), !StopWord.isWord(raw) else { return nil }
        return Unmanaged<MPSCQueueBox>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Made now if there is none (S3).
    private final func makeSystemQueue() -> MPSCQueueBox {
        var current = systemQueueStorage.load(ordering: .acquiring)
        while true {
            if let raw = current, !StopWord.isWord(raw) { return Unmanaged<MPSCQueueBox>.fromOpaque(raw).takeUnretainedValue() }
            let box = try! MessageEncoding<SystemMessage>.makeQueueBox(capacity: 4)
            if let raw = current, let word = StopWord(raw) {
                _ = MessageEncoding<SystemMessage>.enqueue(word.message, into: box.queue)  // private until the CAS
            }
            let fresh = Unmanaged.passRetained(box)
            let (won, seen) = systemQueueStorage.compareExchange(
                expected: current, desired: fresh.toOpaque(), successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if won {
                if current != nil { scheduleSelf() }  // carried a stop (S1); harmless (R1)
                return box
            }
            fresh.release()  // the loser's queue, with its copy of the stop
            current = seen
        }
    }

    /// Any thread; schedules the cell if needed.
    final func sendSystem(_ message: SystemMessage) {
        if traits.contains(.stopWord), case .stop(let mode, let reason) = message, let word = StopWord(mode, reason),
           systemQueueStorage.compareExchange(expected: nil, desired: word.raw, ordering: .acquiringAndReleasing).exchanged {
            scheduleSelf()  // S1
            return
        }
        let box = systemQueue ?? makeSystemQueue()
        if case (.accepted(true), _) = MessageEncoding<SystemMessage>.enqueue(message, into: box.queue) {
            scheduleSelf()
        }
    }

    /// S2.
    private final func takeStopWord() -> SystemMessage? {
        guard let raw = systemQueueStorage.load(ordering: .acquiring), let word = StopWord(raw),
              systemQueueStorage.compareExchange(expected: raw, desired: nil, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        return word.message
    }

    /// After shutdown the scheduler calls `runAfterShutdown` instead.
    @inlinable @inline(__always) final func scheduleSelf() {
        // `let`s all the way: no retain. A registered cell has its owner bit set.
        Unmanaged.passUnretained(system.scheduler)._withUnsafeGuaranteedRef { $0.scheduleGuessingOwner(entry: entry) }
    }

    /// The protocol's turn, for a caller with no permit: its drain never lingers.
    @usableFromInline
    final func runTurn(budget: Int) -> TurnOutcome { runTurn(budget: budget, lingering: .never) }

    /// One turn, told whether its mailbox drain may linger; every cell class overrides it.
    @usableFromInline
    func runTurn(budget: Int, lingering: LingerPermit) -> TurnOutcome {
        preconditionFailure("AnyActorCell.runTurn(budget:lingering:) must be overridden by \(type(of: self))")
    }

    /// The scheduler will never run this cell again; the caller holds it like a turn.
    @usableFromInline
    final func runAfterShutdown() {
        let previousTurn = enterTurn()  // exclusive, like a turn (TurnConfinement T1)
        defer { leaveTurn(previousTurn) }
        _ = takeStopWord()  // dropped like a queued stop: the stop below counts
        if let systemQueue {
            while systemQueue.queue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }, { message in
                switch message {
                case .watch, .unwatch, .observe:
                    handleSystem(message)
                default:
                    break
                }
            }) == .more { sched_yield() }
        }
        finishAfterShutdown()
    }

    func finishAfterShutdown() {}

    /// Leaves the registry once stopped and every message is accounted for.
    final func leaveRegistry() {
        guard !leftRegistry else { return }
        leftRegistry = true
        system.cellTerminated(self)
    }

    /// Two loads; checked before each user message.
    @inlinable @inline(__always) final var hasSystemWork: Bool {
        guard let raw = systemQueueStorage.load(ordering: .acquiring) else { return false }
        if StopWord.isWord(raw) { return true }
        return Unmanaged<MPSCQueueBox>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.queue.hasPendingWork }
    }

    /// For stopped cells.
    final func drainSystem() -> MPSCQueue.DrainOutcome {
        var releaseRequested = false
        return drainSystem(releaseRequested: &releaseRequested)
    }

    /// Notes a `.releaseMailboxRing` for the general turn.
    final func drainSystem(releaseRequested: inout Bool) -> MPSCQueue.DrainOutcome {
        if let stop = takeStopWord() { handleSystem(stop) }  // S2
        guard let systemQueue, systemQueue.queue.hasPendingWork else { return .empty }
        return systemQueue.queue.drain(max: Int.max, taking: { MessageEncoding<SystemMessage>.take(from: $0) }) { message in
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

    /// Before the cell is registered or scheduled.
    final func startWithoutTurn() {
        advance(.start)
        instanceStarted = true
    }

    final func startIfNeeded() {
        guard isCreated else { return }
        advance(.start)
        do { try startInstance() } catch { handleFailure(error) }
        finishPendingStop()
    }

    /// Logs at debug (resume), warning (restart) or error (stop, escalate).
    @usableFromInline final func handleFailure(_ error: any Error) {
        // A back-off restart is already under way.
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

    /// A failure in the fresh instance's preStart stops the actor.
    final func startRestartedInstance() {
        do { try startInstance() } catch {
            logger.error("actor failed again in preStart after a restart; supervisor stops it",
                         metadata: ["error": "\(error)", "supervisor/directive": "stop"])
            advance(.stopFromInside, .failed(String(describing: error)))
        }
    }

    /// Stops the old instance's children and frees their names at once.
    final func stopChildrenForRestart() {
        guard extrasStorage != nil, !children.isEmpty else { return }
        for child in children.values {
            system.releaseName(of: child)
            child.stopImmediately()
        }
        children = [:]
    }

    /// From outside its turns. A Router does nothing.
    func stopImmediately() { sendSystem(.stop(.immediately, .stopped)) }

    @usableFromInline final func finishPendingStop() {
        guard pendingStopCode != .none else { return }
        advance(.pendingStopDue)
    }

    /// The stop, run once (L2).
    private final func finalizeStop(postStop: Bool) {
        let reason = phaseReason
        if case .failed = reason { system.counters.failedStops.wrappingAdd(1, ordering: .relaxed) }
        system.releaseName(of: self)
        closeMailbox()
        if let extras = extrasStorage {
            // Now, so waiting senders get their messages back.
            for child in extras.children.values { child.stopImmediately() }
        }
        if postStop, extrasStorage == nil || !cancelPendingRestart() { stopInstance() }  // a pending restart's postStop ran
        resetBehaviourState()
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

    /// So what they captured keeps nothing alive.
    func releaseInstance() {}

    /// Consumer only; the overflow count joins the retired one.
    @inline(never)
    final func releaseMailboxRing() {
        var overflows = 0
        guard queue.releaseIdleRing(overflowAppends: &overflows) else { return }
        system.counters.retiredOverflows.wrappingAdd(overflows, ordering: .relaxed)
        system.counters.mailboxRingsReleased.wrappingAdd(1, ordering: .relaxed)
    }

    // MARK: counts of the user mailbox (any thread; snapshots; 0 for a router)

    /// Taken out plus still inside.
    final var acceptedCount: Int { queue.dequeuedCount + queue.approximateCount }
    /// When the cell leaves the registry, drained: taken out only.
    final var retiredAcceptedCount: Int { queue.dequeuedCount }
    final var overflowCount: Int { queue.overflowAppends }
    /// The queued count is read once.
    final var reportFigures: (delivered: Int, accepted: Int, left: Int) {
        let queued = queue.approximateCount
        return (deliveredCount, queue.dequeuedCount &+ queued, queued &+ heldOutsideQueue)
    }

    /// One-writer atomic.
    var deliveredCount: Int { 0 }

    final var watchableCell: AnyActorCell? { self }

    /// Overridden by every kind of cell.
    var mailboxDepth: Int { 0 }

    /// Overridden by every kind of cell.
    func stop(_ mode: StopMode) {
        preconditionFailure("AnyActorCell.stop(_:) must be overridden by \(type(of: self))")
    }

    // MARK: overridden by ActorCellBase / ActorCell / SequentialActorCell

    /// Thread-safe; idempotent.
    func closeMailbox() {}
    /// A sequential actor's Inbox buffer.
    var heldOutsideQueue: Int { 0 }
    func startInstance() throws {}
    func stopInstance() {}
    /// Restart and stop.
    func resetBehaviourState() {}
    func handleTerminated(_ t: Terminated) {}
    @usableFromInline var childSupervisor: SupervisorStrategy { system.defaultSupervisor }
}
