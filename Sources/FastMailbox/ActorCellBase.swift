// ActorCellBase: an actor's typed half, the user mailbox and one turn of processing.
//
// One turn (runTurn, never concurrent with itself):
//   1. preStart on the first turn, then the system queue (a closure actor is born running).
//   2. A stopped cell dead-letters up to `budget` messages and ends the turn. System
//      messages are checked before every message, so a stop ends with the message in hand.
//   3. Unstashed messages first, then the mailbox, each to the top `become` closure or the
//      behaviour. A mailbox message met while unstashed ones wait, or while a back-off
//      restart is pending, joins them, keeping its place.
//   4. A draining cell stops once its mailbox reported empty.
//   5. .more if work is left (re-queued at the back), else .idle.
//
// (A1) delivered = the mailbox's taken count − `undelivered`. Only off the common path
//      does the turn change `undelivered` (+1 taken but not handed over, −1 handed over
//      from elsewhere), so a delivered message writes nothing to the cell's first line,
//      which every sender reads; it lives in TypedExtras, so most cells pay no word for
//      it. Stashed and unstashed messages count in `heldBack`.
// (A2) The inlinable spawn forms the cell's own turn (`ActorCell.specializedTurn`) for the
//      concrete actor type, which the worker calls directly: the common turn's checks and
//      the pass (drain, move and `receive`), all specialised. The common turn (running,
//      nothing unstashed or queued in the system queue, unbounded) is just the pass; any
//      other is runGeneralTurn, which is given the pass.
// (A3) The unit header keeps that turn as its code alone (MNScheduler's UnitTurn.swift).
//      Unspecialised code (a debug build) makes a turn with a context, the generic
//      metadata; the extras keep that one, and the worker reaches it through the kind and
//      the class's `runTurn`.
// Wake-ups: UnitHeader.swift, R3.

import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline
class ActorCellBase<Message: Sendable>: AnyActorCell, MessageRecipient, @unchecked Sendable {
    typealias Behavior = (Message, ActorContext<Message>) throws -> Void

    /// How `Message` travels through `queue`.
    @usableFromInline typealias Encoding = MessageEncoding<Message>
    /// nil for an unbounded mailbox. Any thread.
    final var waiters: BoundedMailboxWaiters<Message>? {
        @inline(__always) get {
            guard traits.contains(.bounded) else { return nil }
            return unsafeDowncast(spawnInfo.unsafelyUnwrapped.waiters.unsafelyUnwrapped,
                                  to: BoundedMailboxWaiters<Message>.self)
        }
    }
    /// Computed once at spawn.
    final var boxed: Bool { @inline(__always) get { traits.contains(.boxed) } }


    /// Behaviour state most actors never use (C2).
    @usableFromInline final class TypedExtras: AnyActorCell.Extras {
        // Per-message checks read only scalars (arrays cost metadata look-ups).
        var becomeStack: [Behavior] = [] { didSet { becomeDepth = becomeStack.count } }
        @exclusivity(unchecked) @usableFromInline var becomeDepth = 0 { didSet { updateTurnBits() } }
        var stashed: [Message] = []
        var priority: [Message] = [] { didSet { priorityCount = priority.count } }
        @exclusivity(unchecked) @usableFromInline var priorityCount = 0 { didSet { updateTurnBits() } }
        @exclusivity(unchecked) @usableFromInline var priorityIndex = 0 { didSet { updateTurnBits() } }
        /// Into the cell's `TurnBit`s, which the common turn tests.
        override func updateTurnBits() {
            cell.setTurnBit(AnyActorCell.TurnBit.generalTurn, priorityIndex < priorityCount || restartPending)
            cell.setTurnBit(AnyActorCell.TurnBit.becoming, becomeDepth > 0)
        }
        /// As last added to the system's `heldBack`.
        var heldBack = 0
        /// A1. Written by the turn only; read from any thread (E1).
        let undelivered = Atomic<Int>(0)
        /// The cell's own turn when it has a context, made by unspecialised code (A3). Set
        /// before the cell runs.
        var unspecializedTurn: UnitTurn?
        var watchMessages: [ActorID: Message] = [:]
        var watching: Set<ActorID> = []
        var timers: ActorTimerTable<Message>?
        @inlinable @inline(__always) var hasPriority: Bool { priorityIndex < priorityCount }
    }
    /// No generic `Optional.map` per message.
    @inlinable final var typedExtras: TypedExtras? {
        @inline(__always) get {
            guard let extras = extrasStorage else { return nil }
            return unsafeDowncast(extras, to: TypedExtras.self)
        }
    }
    final var typed: TypedExtras { unsafeDowncast(extras, to: TypedExtras.self) }
    override final func makeExtras() -> Extras { TypedExtras(cell: self) }
    final var becomeStack: [Behavior] {
        get { typedExtras?.becomeStack ?? [] }
        _modify { yield &typed.becomeStack }
    }
    final var stashed: [Message] {
        get { typedExtras?.stashed ?? [] }
        _modify { yield &typed.stashed }
    }
    final var priority: [Message] {
        get { typedExtras?.priority ?? [] }
        _modify { yield &typed.priority }
    }
    final var priorityIndex: Int {
        get { typedExtras?.priorityIndex ?? 0 }
        _modify { yield &typed.priorityIndex }
    }
    final var watchMessages: [ActorID: Message] {
        get { typedExtras?.watchMessages ?? [:] }
        _modify { yield &typed.watchMessages }
    }
    final var watching: Set<ActorID> {
        get { typedExtras?.watching ?? [] }
        _modify { yield &typed.watching }
    }

    @inline(__always) final var hasPriority: Bool { typedExtras?.hasPriority ?? false }

    /// Inlinable: specialised, with constant arguments. `turn`: the cell's own turn (A2).
    @inlinable
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, turn: UnitTurn?,
         bounded: Bool) {
        let traits: Traits = Encoding.isBoxed ? [.boxed, .stopWord] : .stopWord
        if _fastPath(name == nil && parent == nil && supervisor == nil && !bounded) {
            super.init(id: id, system: system, mailbox: mailbox.signallingUnit(), traits: traits, turn: turn)
        } else {
            super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                       mailbox: mailbox.signallingUnit(), traits: traits,
                       waiters: bounded ? ActorCellBase.makeWaiters() : nil, turn: turn)
        }
        // The turn itself, not the header: reading a stored property here costs a retain.
        if let turn, UnitTurnCode(turn) == nil { keepUnspecializedTurn(turn) }
    }

    /// A3; before the cell can run (C2).
    @usableFromInline
    final func keepUnspecializedTurn(_ turn: @escaping UnitTurn) { typed.unspecializedTurn = turn }

    /// The cell's own turn, kept either way (A3); nil for a cell made without one.
    final var ownTurn: UnitTurn? {
        if unitHeader.keepsOwnTurn { return unitHeader.turnCode.turn }
        // A match, not `?? nil`: that generic call would re-abstract the closure (an
        // allocation in debug builds).
        guard let extras = typedExtras, case .some(let turn) = extras.unspecializedTurn else { return nil }
        return turn
    }

    /// True when the cell has its own turn, kept either way (A3).
    final var hasOwnTurn: Bool { ownTurn != nil }

    @usableFromInline
    static func makeWaiters() -> AnyObject { BoundedMailboxWaiters<Message>() }

    /// The `TurnBit`s agree with the phase and the extras (checked per turn in debug builds).
    final var turnBitsAgree: Bool {
        var expected: UInt8 = 0
        if phaseCode != .running { expected |= TurnBit.notRunning }
        if isStopped { expected |= TurnBit.stopped }
        if pendingStopCode != .none { expected |= TurnBit.stopPending }
        if let extras = typedExtras {
            if extras.hasPriority || extras.restartPending { expected |= TurnBit.generalTurn }
            if extras.becomeDepth > 0 { expected |= TurnBit.becoming }
        }
        let all = TurnBit.notRunning | TurnBit.stopped | TurnBit.generalTurn | TurnBit.becoming | TurnBit.stopPending
        return turnBits & all == expected
    }

    deinit {
        // The queue's deinit destroys what its ring holds; an item left in its first slot
        // is destroyed here, where its type is known.
        queue.takeFirstSlotItem { Encoding.destroyItem(at: $0) }
    }

    // MARK: MessageRecipient (any thread)

    /// Plus one while a turn runs.
    @usableFromInline override final var mailboxDepth: Int { queue.approximateCount + (isInTurn ? 1 : 0) }

    /// Specialised in the sender's module, never inlined into `ActorRef.deliver`. A bounded
    /// mailbox takes the ring path too: it never overflows, so `enqueueOnRing` inserts
    /// when the ring has room and declines when it is full, as `deliverBounded` would.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        if queue.sendNeedsSection { return deliverInSection(movingFrom: source) }
        if !Encoding.isBoxed,
           let becameNonEmpty = queue.enqueueOnRing(moving: source, itemBytes: Encoding.itemBytes, signalling: entry) {
            if becameNonEmpty { return scheduleAfterSend() }
            return true
        }
        return deliverFully(movingFrom: source)
    }

    /// From outside a ring epoch section to a reclaimable mailbox.
    @inlinable @inline(never)
    final func deliverInSection(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        RingEpoch.enter()
        defer { RingEpoch.exit() }
        if !Encoding.isBoxed,
           let becameNonEmpty = queue.enqueueOnRing(moving: source, itemBytes: Encoding.itemBytes, signalling: entry) {
            if becameNonEmpty { scheduleSelf() }
            return true
        }
        return deliverFully(movingFrom: source)
    }

    @inlinable @inline(__always)
    final func scheduleAfterSend() -> Bool {
        Unmanaged.passUnretained(system.scheduler)._withUnsafeGuaranteedRef { scheduleOwnedAccepting(entry, on: $0) }
    }

    /// The full enqueue, when `enqueueOnRing` declined.
    @inlinable @inline(never)
    final func deliverFully(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        if traits.contains(.bounded) { return deliverBounded(movingFrom: source) }
        switch Encoding.enqueueSpecialised(movingFrom: source, into: queue, signalling: entry) {
        case .accepted(let becameNonEmpty):
            if becameNonEmpty { scheduleSelf() }
            return true
        case .closed:
            refuse(movingFrom: source)
            return false
        }
    }

    /// Out of line: no `Message` on the send path's stack.
    @usableFromInline @inline(never)
    final func refuse(movingFrom source: UnsafeMutableRawPointer, reason: DeadLetterReason? = nil) {
        let message = Encoding.take(from: source, boxed: false)
        system.publishDeadLetter(message, recipient: id, recipientName: name, reason: reason, wasQueued: false)
    }

    /// Into the ring if it has room, else a dead letter.
    @usableFromInline @inline(never)
    final func deliverBounded(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        let (result, refused) = Encoding.tryEnqueue(Encoding.take(from: source, boxed: false), into: queue, signalling: entry)
        switch result {
        case .accepted(let becameNonEmpty)?:
            if becameNonEmpty { scheduleSelf() }
            return true
        case .closed?:
            deadLetter(refused!, wasQueued: false)
        case nil:
            system.publishDeadLetter(refused!, recipient: id, recipientName: name, reason: .mailboxFull, wasQueued: false)
        }
        return false
    }

    /// Never overtakes senders waiting in ``ActorRef/send(_:)``.
    final func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        if let waiters, waiters.count.load(ordering: .relaxed) > 0 {
            return queue.isClosed ? .stopped(message) : .full(message)
        }
        let (result, refused) = waiters != nil
            ? Encoding.tryEnqueue(message, into: queue, signalling: entry)
            : Encoding.enqueue(message, into: queue, signalling: entry)
        switch result {
        case .accepted(let becameNonEmpty)?:
            if becameNonEmpty { scheduleSelf() }
            return .accepted
        case .closed?: return .stopped(refused!)
        case nil: return .full(refused!)
        }
    }

    final func send(_ message: consuming Message) async throws(SendError<Message>) {
        guard let waiters else {
            let (result, refused) = Encoding.enqueue(message, into: queue, signalling: entry)
            guard case .accepted(let becameNonEmpty) = result else { throw .stopped(refused!) }
            if becameNonEmpty { scheduleSelf() }
            return
        }
        if waiters.count.load(ordering: .relaxed) == 0 {
            let (result, refused) = Encoding.tryEnqueue(message, into: queue, signalling: entry)
            switch result {
            case .accepted(let becameNonEmpty)?:
                if becameNonEmpty { scheduleSelf() }
                return
            case .closed?: throw .stopped(refused!)
            case nil: try await waiters.send(refused!, to: self)
            }
        } else {
            try await waiters.send(message, to: self)
        }
    }

    /// `.immediately` also stops the turn before its next message. Waiters are failed (W4).
    override final func stop(_ mode: StopMode) {
        closeMailbox()
        sendSystem(.stop(mode, .stopped))
    }

    override final func stopImmediately() { stop(.immediately) }

    /// `wasQueued`: it was accepted.
    final func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued && !leftRegistry)
    }

    // MARK: the turn

    /// A turn through the kind: the cell's own turn when it has a context (A3), which is
    /// where debug builds check turn confinement; else (no own turn) the general turn.
    override final func runTurn(budget: Int, lingering: LingerPermit) -> TurnOutcome {
        let previousTurn = enterTurn()  // debug builds only
        defer { leaveTurn(previousTurn) }
        assert(budget > 0, "a turn with no budget")
        assert(turnBitsAgree, "the turn byte's bits disagree with the phase or the extras")
        if let turn = ownTurn { return turn(self, budget, lingering) }
        return runGeneralTurn(budget: budget, lingering: lingering) { _, _ in nil }
    }

    /// The common turn applies (A2): running, nothing unstashed, pending or queued in the
    /// system queue, an unbounded mailbox. Turn only.
    @inlinable @inline(__always)
    final var isCommonTurn: Bool {
        turnBits & (TurnBit.notRunning | TurnBit.generalTurn) == 0 && !traits.contains(.bounded) && !hasSystemWork
    }

    /// The end of a common turn whose pass returned `outcome`: usually just `outcome`.
    @inlinable @inline(__always)
    final func finishCommonTurn(_ outcome: TurnOutcome) -> TurnOutcome {
        if turnBits & (TurnBit.notRunning | TurnBit.generalTurn | TurnBit.stopPending) == 0 { return outcome }
        return finishTurn(mailboxOutcome: outcome == .more ? .more : .empty, systemOutcome: .empty, ranMailbox: true)
    }

    /// Steps 1–5; out of line, so the common turn saves fewer registers. `pass` drains the
    /// mailbox into the behaviour (nil: the cell has none, and the drain is unspecialised).
    @usableFromInline @inline(never)
    final func runGeneralTurn(budget: Int, lingering: LingerPermit,
                              pass: (_ max: Int, _ lingering: LingerPermit) -> TurnOutcome?) -> TurnOutcome {
        if isCreated { startIfNeeded() }
        var releaseRing = takeReleaseRequest()  // ActorSystem+Reclaim: the request word…
        let systemOutcome = hasSystemWork ? drainSystem(releaseRequested: &releaseRing) : .empty  // …or message
        if let extras = typedExtras, extras.restartPending, !isStopped {
        // Messages stay queued until the back-off timer fires.
            return systemOutcome == .more ? .more : .idle
        }
        let mailboxOutcome: MPSCQueue.DrainOutcome
        let ranMailbox = !isStopped
        if !ranMailbox {
            mailboxOutcome = deadLetterMailbox(max: budget)
        } else {
            var remaining = budget
            if let extras = typedExtras, extras.hasPriority { remaining = runUnstashed(max: remaining) }
            if remaining > 0 {
                if let outcome = pass(remaining, lingering) {
                    mailboxOutcome = outcome == .more ? .more : .empty
                } else {
                    mailboxOutcome = drainUnspecialised(max: remaining, lingering: lingering)
                }
            } else {
                // Only a drain may declare the mailbox idle.
                mailboxOutcome = stateSnapshot != UnitHeader.idle ? .more : .empty
            }
        }
        if releaseRing, mailboxOutcome == .empty, case .running = phaseCode { releaseMailboxRing() }
        let outcome = finishTurn(mailboxOutcome: mailboxOutcome, systemOutcome: systemOutcome, ranMailbox: ranMailbox)
        assert(turnBitsAgree, "the turn byte's bits disagree with the phase or the extras")
        return outcome
    }

    /// Steps 4, 5. `ranMailbox`: messages were handled, not dead-lettered.
    @usableFromInline
    final func finishTurn(mailboxOutcome: MPSCQueue.DrainOutcome, systemOutcome: MPSCQueue.DrainOutcome,
                          ranMailbox: Bool) -> TurnOutcome {
        finishPendingStop()  // asked for in the turn's last message
        if ranMailbox {
            if let waiters, waiters.count.load(ordering: .relaxed) > 0, waiters.admit(into: self) {
                scheduleSelf()  // waiting senders filled the room (W2)
            }
            if case .draining = phaseCode, mailboxOutcome == .empty, !hasPriority {
                advance(.mailboxDrained)
            }
        }
        if isStopped, mailboxOutcome == .empty {
            leaveRegistry()
        }
        let more = mailboxOutcome == .more || systemOutcome == .more
            || (!isStopped && hasPriority)
        return more ? .more : .idle
    }

    // Parts of a turn that hold a `Message` in unspecialised code, out of line.

    @inline(never)
    final func deadLetterMailbox(max: Int) -> MPSCQueue.DrainOutcome {
        Encoding.drain(queue, max: max, boxed: boxed) { countUndelivered(1); deadLetter($0) }
    }

    /// Step 3; returns the budget left.
    @inline(never)
    final func runUnstashed(max: Int) -> Int {
        guard let extras = typedExtras else { return max }
        var remaining = max
        while remaining > 0, extras.hasPriority {
            let message = extras.priority[extras.priorityIndex]
            extras.priorityIndex += 1
            remaining -= 1
            if hasSystemWork { _ = drainSystem() }
            if isStopped { deadLetter(message) } else { countUndelivered(-1); invoke(message) }
        }
        if !extras.hasPriority {
            extras.priority.removeAll()
            extras.priorityIndex = 0
        }
        updateHeldBack()
        return remaining
    }

    @inline(never)
    final func drainUnspecialised(max: Int, lingering: LingerPermit) -> MPSCQueue.DrainOutcome {
        Encoding.drain(queue, max: max, boxed: boxed, lingering: lingering) { handleFromMailbox($0) }
    }

    override final func finishAfterShutdown() {
        advance(.shutdown)
        let boxed = boxed
        while Encoding.drain(queue, max: Int.max, boxed: boxed, { countUndelivered(1); deadLetter($0) }) == .more {
            sched_yield()
        }
        leaveRegistry()
    }

    /// A2. Turn only.
    @inlinable @inline(__always)
    final var isOnFastPath: Bool {
        if hasSystemWork { return false }
        return turnBits & (TurnBit.stopped | TurnBit.generalTurn | TurnBit.becoming | TurnBit.stopPending) == 0
    }

    /// A2: drain, move and call in one function. `firstSlotSpent`: the caller saw the
    /// queue's first slot spent (MPSCQueue.drain), so this copy has no code for it.
    @inlinable @inline(__always)
    final func drainOnFastPath(max: Int, lingering: LingerPermit, firstSlotSpent: Bool,
                               _ receive: (Message) throws -> Void) -> TurnOutcome {
        @inline(__always) func handle(_ message: Message) {
            if isOnFastPath { invokeOnFastPath(message, receive) } else { handleFromMailbox(message) }
        }
        let outcome = queue.drain(max: max, lingering: lingering, itemBytes: Encoding.itemBytes, signallingUnit: true,
                                  firstSlotSpent: firstSlotSpent, taking: { Encoding.take(from: $0) }, handle)
        return outcome == .more ? .more : .idle
    }

    /// The mailbox already counted the message (A1). A stop the message asks for is
    /// finished before the next message, which then leaves the fast path
    /// (`TurnBit.stopPending`), or when the turn ends (`finishTurn`).
    @inlinable @inline(__always)
    final func invokeOnFastPath(_ message: Message, _ receive: (Message) throws -> Void) {
        do {
            try receive(message)
        } catch {
            handleFailure(error)
        }
    }

    /// Step 3.
    @usableFromInline @inline(never)
    final func handleFromMailbox(_ message: consuming Message) {
        finishPendingStop()  // one the previous message asked for
        if hasSystemWork { _ = drainSystem() }
        if isStopped {
            countUndelivered(1)
            deadLetter(message)
        } else if let extras = typedExtras, extras.hasPriority || extras.restartPending {
            countUndelivered(1)  // handed over later, from the priority list
            extras.priority.append(message)
            updateHeldBack()
        } else {
            invoke(message)
        }
    }

    final func updateHeldBack() {
        guard let extras = typedExtras else { return }
        let count = extras.stashed.count + extras.priorityCount - extras.priorityIndex
        let delta = count - extras.heldBack
        if delta != 0 {
            extras.heldBack = count
            system.heldBack.wrappingAdd(delta, ordering: .relaxed)
        }
    }

    /// Counted as delivered again when handled after `unstashAll`, else a dead letter.
    final func stash(_ message: Message) {
        typed.stashed.append(message)
        countUndelivered(1)
        updateHeldBack()
    }

    @inline(__always)
    final func countUndelivered(_ delta: Int) {
        let extras = typed
        extras.undelivered.store(extras.undelivered.load(ordering: .relaxed) &+ delta, ordering: .relaxed)
    }

    /// A1; a snapshot, from any thread (E1).
    override final var deliveredCount: Int {
        let taken = queue.dequeuedCount
        guard let extras = publishedExtras else { return taken }
        return taken &- unsafeDowncast(extras, to: TypedExtras.self).undelivered.load(ordering: .relaxed)
    }

    /// Failures go to the supervisor.
    @inline(__always)
    final func invoke(_ message: Message) {
        do {
            if let extras = typedExtras, extras.becomeDepth > 0, let top = extras.becomeStack.last {
                try top(message, ActorContext(cell: self))
            } else {
                try receive(message)
            }
        } catch {
            handleFailure(error)
        }
        if pendingStop != nil { finishPendingStop() }
    }

    // MARK: overridden by ActorCell

    func receive(_ message: Message) throws {}

    // MARK: AnyActorCell hooks

    override final func closeMailbox() {
        queue.markClosed()
        waiters?.failAll()  // after the close (W4)
    }

    override final func resetBehaviourState() {
        guard let extras = typedExtras else { return }
        extras.timers?.cancelAll()  // a stop or a restart ends every timer (ActorTimers.swift)
        if extras.becomeDepth > 0 { extras.becomeStack = [] }
        // Dead-lettered on stop, kept in order on restart. Most cells hold none.
        if !extras.stashed.isEmpty || extras.priorityCount > 0 {
            if isStopped {
                for message in stashed { deadLetter(message) }
                for message in priority[priorityIndex...] { deadLetter(message) }
                priority = []
                priorityIndex = 0
            } else {
                unstashAll()
            }
            stashed = []
        }
        updateHeldBack()
    }

    override final func handleTerminated(_ t: Terminated) {
        if deferTerminationDuringRestart(t) { return }  // for the fresh instance (AnyActorCell+Backoff.swift)
        guard watching.remove(t.id) != nil else { return }
        if let message = watchMessages.removeValue(forKey: t.id) {
            system.runtimeSent.wrappingAdd(1, ordering: .relaxed)
            countUndelivered(-1)  // not taken from the mailbox (A1)
            invoke(message)
        } else {
            do { try receiveSignal(.terminated(t)) } catch { handleFailure(error) }
        }
    }

    func receiveSignal(_ signal: Signal) throws {}

    // MARK: context operations (turn only)

    final func unstashAll() {
        guard !stashed.isEmpty else { return }
        let rest = priority[priorityIndex...]
        priority = stashed + rest
        priorityIndex = 0
        stashed = []
        updateHeldBack()
    }
}
