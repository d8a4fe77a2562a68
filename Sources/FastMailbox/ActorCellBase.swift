// ActorCellBase — an actor's typed half: the user mailbox and one turn of processing.
//
// One turn (runTurn, on a scheduler worker, never concurrent with itself):
//   1. run preStart if this is the first turn (spawn schedules the new cell directly;
//      a closure actor, whose preStart is empty, is born running and gets no such turn:
//      ActorSystem.enroll), then drain the system queue completely (stop, watch,
//      terminated, childFailed);
//   2. a stopped cell dead-letters up to `budget` mailbox messages and ends the turn;
//      `stop(.immediately)` from any thread closes the mailbox at once and queues a system
//      message; the turn looks for pending system messages before every message (two
//      loads) and handles them there, so the message in hand is the last one handled and
//      the rest become dead letters;
//   3. messages released by unstashAll() go first (the priority list), then up to the rest
//      of `budget` from the mailbox, each handed to the top `become` closure or to the
//      behaviour. A message arriving in a batch while the priority list is non-empty is
//      appended to it, so unstashed messages keep their place ahead of newer ones;
//   4. a `.draining` cell (stop after drain) stops once its mailbox reported empty;
//   5. the turn returns .more if the mailbox, the system queue or the priority list still
//      holds work (the scheduler re-queues the cell at the back: fairness), else .idle.
// Accounting: the delivered count (messages handed to the behaviour) is derived, not
// counted per message: it is the mailbox's count of messages taken (MPSCQueue's
// `dequeuedCount`, which the drain already keeps on the ring's consumer line, counted
// before the hand-off) minus `undelivered`, which the turn changes only off the common
// path: +1 for a message taken and not handed over (dead-lettered by a stopped cell or at
// shutdown, put behind unstashed messages) and for one stashed (handed back until it is
// handled again or dead-lettered); −1 for one handed over that was not taken from the
// mailbox then (an unstashed message, a watch's message). A handed-over message therefore
// costs no write to the cell, whose first line every sender reads (AnyActorCell, "Layout").
// The stash and the unstashed messages still waiting are counted in the system's
// `heldBack` (what shutdown adds to `left` for actors that did not stop; a stopped actor
// dead-letters them).
// After the scheduler shut down, runAfterShutdown (AnyActorCell) finalizes the cell and
// finishAfterShutdown below dead-letters the mailbox, the stash and the unstashed list.
// Specialised turns: this generic class's methods are compiled once, unspecialised (the
// scheduler calls runTurn through the vtable), so every message would pay value-witness
// calls and metadata look-ups for `Message`. The @inlinable spawn entry points therefore
// build a `MailboxPass` for the concrete actor type in the caller's module
// (ActorCell.specializedMailboxPass): the mailbox drain and the move out of the ring slot
// (Mailbox's `take(max:lingering:_:)`) and the call into the behaviour's `receive`, all
// specialised. runTurn calls it for the
// mailbox part of a turn. Per message it checks `isOnFastPath` (no system message
// pending, not stopped, no `become` behaviour or unstashed messages in front) and
// otherwise hands the message to the unspecialised `handleFromMailbox`, which is the one
// place that knows the rules above; cells spawned without a pass use it for every message.
// The common turn (a running cell with a pass, no system message pending, nothing
// unstashed, an unbounded mailbox) is tested for first and is just the pass: steps 1, 2,
// 3's priority list and 4 have nothing to do then, and step 5 is the pass's outcome; a
// turn whose behaviour stopped the actor or unstashed messages ends through the general
// tail (finishTurn). Any other turn is runGeneralTurn, steps 1–5 as written.
// Wake-ups: the cell's mailbox signals the cell itself (MPSCQueue, "The unit as the idle
// flag"): after every send, the sender looks at the cell's state word — a cell already
// scheduled or notified is left alone (one plain load), an idle one is scheduled, a
// running one marked notified so that it runs again — so a message is never left behind
// (ScheduledUnit R3 and "Due units").

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
    /// Drains up to `max` mailbox messages into the behaviour, specialised for one actor
    /// type (see "Specialised turns" in the file comment). Returns the drain's outcome as
    /// the turn's (`.more` for `.more`, `.idle` for `.empty`): the common turn returns it
    /// as it is, and the pass makes the conversion on the drain's own constants (free),
    /// where runTurn had to compare and set it on every turn.
    @usableFromInline typealias MailboxPass = (ActorCellBase<Message>, _ max: Int) -> TurnOutcome

    /// The user mailbox, every typed operation on it one of Mailbox's (messages in ring
    /// slots, see MessageEncoding). Its queue is the cell itself (MPSCQueue, "One object":
    /// no second object per actor). Messages still inside when the cell goes (left at a
    /// shutdown whose actor never finished) are released by the queue's deinit, the cell's
    /// last. The untyped operations (`isClosed`, `markClosed()`, `approximateCount`,
    /// `hasPendingWork`, `dequeuedCount`, …) are called on the cell itself: where the call
    /// is not inlined, forming the Mailbox costs a retain and a release of the cell.
    @inlinable final var mailbox: Mailbox<Message> { @inline(__always) get { Mailbox(queue: self) } }
    /// The specialised mailbox pass, nil when spawned from unspecialised code.
    @usableFromInline let mailboxPass: MailboxPass?
    /// Messages taken from the mailbox and not handed to the behaviour, less those handed
    /// to it from elsewhere (file comment, "Accounting"). Written only by the turn (a
    /// relaxed load and store), read by any thread through `deliveredCount`.
    let undelivered = Atomic<Int>(0)
    /// Senders waiting for room; nil for an unbounded mailbox (see BoundedMailboxWaiters:
    /// a bounded mailbox is its ring, with no overflow). Kept in the cell's SpawnInfo; the
    /// unbounded case reads one byte. Any thread.
    final var waiters: BoundedMailboxWaiters<Message>? {
        @inline(__always) get {
            guard traits.contains(.bounded) else { return nil }
            return unsafeDowncast(spawnInfo.unsafelyUnwrapped.waiters.unsafelyUnwrapped,
                                  to: BoundedMailboxWaiters<Message>.self)
        }
    }
    /// True when `Message` is too big for a ring slot and travels boxed (computed once, at
    /// spawn, into the cell's traits: this generic class's code is not specialised, see
    /// MessageEncoding).
    final var boxed: Bool { @inline(__always) get { traits.contains(.boxed) } }

    // Turn-confined (AnyActorCell C2).

    /// Behaviour state most actors never use (become stack, stash, watch messages),
    /// allocated on first use so an idle actor stays small: the cell's one side object
    /// (AnyActorCell.Extras, made by `makeExtras`), so the hot path only tests
    /// `extrasStorage == nil`.
    @usableFromInline final class TypedExtras: AnyActorCell.Extras {
        // The per-message checks read only the counters (and `offFastPath`, kept from them),
        // never the arrays: in unspecialised generic code touching an array of `Message` or
        // of closures costs a metadata look-up each time (measured: request–reply ping-pong
        // 2.7 → 1.7 M round trips/s).
        var becomeStack: [Behavior] = [] { didSet { becomeDepth = becomeStack.count } }
        // Code specialised in the user's module reads these from the turn: turn-confined
        // (AnyActorCell C2), so no dynamic exclusivity check.
        @exclusivity(unchecked) @usableFromInline var becomeDepth = 0 { didSet { updateOffFastPath() } }
        var stashed: [Message] = []
        var priority: [Message] = [] { didSet { priorityCount = priority.count } }
        @exclusivity(unchecked) @usableFromInline var priorityCount = 0 { didSet { updateOffFastPath() } }
        @exclusivity(unchecked) @usableFromInline var priorityIndex = 0 { didSet { updateOffFastPath() } }
        /// `becomeDepth > 0 || hasPriority`, kept by those three fields' observers: the
        /// per-message check (`isOnFastPath`) reads one byte instead of three words.
        @exclusivity(unchecked) @usableFromInline var offFastPath = false
        func updateOffFastPath() { offFastPath = becomeDepth > 0 || priorityIndex < priorityCount }
        /// stashed + unstashed still waiting, as last added to the system's `heldBack`.
        var heldBack = 0
        var watchMessages: [ActorID: Message] = [:]
        var watching: Set<ActorID> = []
        @inlinable @inline(__always) var hasPriority: Bool { priorityIndex < priorityCount }
    }
    /// The side object, as this cell kind's (turn-confined: see AnyActorCell's `phaseCode`).
    /// No `Optional.map`: this generic class's code is not specialised, and a generic call
    /// there costs metadata look-ups on every message.
    @inlinable final var typedExtras: TypedExtras? {
        @inline(__always) get {
            guard let extras = extrasStorage else { return nil }
            return unsafeDowncast(extras, to: TypedExtras.self)
        }
    }
    final var typed: TypedExtras { unsafeDowncast(extras, to: TypedExtras.self) }
    override final func makeExtras() -> Extras { TypedExtras() }
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

    /// True when unstashed messages wait ahead of the mailbox.
    @inline(__always) final var hasPriority: Bool { typedExtras?.hasPriority ?? false }

    /// Parameters are borrowed (`__shared`), as in AnyActorCell.init. `mailbox`: the
    /// validated shape of the cell's own mailbox queue (ActorSystem.mailboxShape).
    /// Inlinable, so that a spawn (ClosureActorCell's inlinable init, in the caller's
    /// module) makes its cell specialised for `Message`, its arguments mostly constants
    /// there: the traits are a constant (no look-up of the message type's size), the
    /// common spawn (nothing beyond the defaults) takes AnyActorCell's short inlinable init,
    /// and a pass that captures nothing is stored without a retain of its (nil) context.
    /// (Out of line, this init with AnyActorCell's and MPSCQueue's was ~110 instructions a
    /// spawn: scripts/instructions.sh spawnactor.)
    @inlinable
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: __shared MailboxPass?,
         bounded: Bool) {
        self.mailboxPass = mailboxPass
        let traits: Traits = Mailbox<Message>.isBoxed ? [.boxed, .stopWord] : .stopWord
        if _fastPath(name == nil && parent == nil && supervisor == nil && !bounded) {
            super.init(id: id, system: system, mailbox: mailbox.signallingUnit(), traits: traits)
        } else {
            super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                       mailbox: mailbox.signallingUnit(), traits: traits,
                       waiters: bounded ? ActorCellBase.makeWaiters() : nil)
        }
    }

    /// A bounded mailbox's waiting senders (out of line: the inlinable init's rare case).
    @usableFromInline
    static func makeWaiters() -> AnyObject { BoundedMailboxWaiters<Message>() }

    // MARK: MessageRecipient (any thread)

    /// Messages waiting, plus one while a turn is running (the message in hand): the load a
    /// router compares. A snapshot. (Not "running or due": a cell is due from its spawn on,
    /// before any message arrives.)
    @usableFromInline override final var mailboxDepth: Int { approximateCount + (isInTurn ? 1 : 0) }

    /// Inlinable, so that it is specialised for the message type in the sender's module
    /// (`ActorRef.tell`): the message's size and whether it is boxed are constants there.
    /// Never inlined: inlined into `ActorRef.deliver`'s switch it made every other case
    /// (a sequential actor's send) pay its registers (+30 instructions per message).
    /// The common send — unbounded, into the ring or behind an active overflow — is
    /// `Mailbox.enqueueOnRing`, which makes no call, and the schedule is a tail call, so
    /// this path saves and restores almost no registers (−12 instructions per message in
    /// ping-pong, thread-ring and fan-in); anything else is `deliverFully`.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        if mailbox.sendNeedsSection { return deliverInSection(movingFrom: source) }
        if !traits.contains(.bounded), let becameNonEmpty = mailbox.enqueueOnRing(movingFrom: source, signallingUnit: true) {
            if becameNonEmpty { return scheduleAfterSend() }
            return true
        }
        return deliverFully(movingFrom: source)
    }

    /// `deliver` from a thread outside a ring epoch section (not a pool worker) to a
    /// mailbox whose ring may be given back: the same, inside a section (RingEpoch.swift).
    @inlinable @inline(never)
    final func deliverInSection(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        RingEpoch.enter()
        defer { RingEpoch.exit() }
        if !traits.contains(.bounded), let becameNonEmpty = mailbox.enqueueOnRing(movingFrom: source, signallingUnit: true) {
            if becameNonEmpty { scheduleSelf() }
            return true
        }
        return deliverFully(movingFrom: source)
    }

    /// A send that found the cell not due schedules it; true (a tail call of `deliver`,
    /// and itself one of MNScheduler's scheduleOwnedAccepting).
    @inlinable @inline(__always)
    final func scheduleAfterSend() -> Bool {
        Unmanaged.passUnretained(system.scheduler)._withUnsafeGuaranteedRef { scheduleOwnedAccepting(on: $0) }
    }

    /// Every send `enqueueOnRing` declined (a bounded mailbox, no ring yet, a full ring, a
    /// boxed message, a closed mailbox, a busy overflow lock): the full enqueue.
    @inlinable @inline(never)
    final func deliverFully(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        if traits.contains(.bounded) { return deliverBounded(movingFrom: source) }
        switch mailbox.enqueue(movingFrom: source) {
        case .accepted(let becameNonEmpty):
            if becameNonEmpty { scheduleSelf() }
            return true
        case .closed:
            refuse(movingFrom: source)
            return false
        }
    }

    /// A send to a closed mailbox: the message goes to dead letters. Out of line, so the
    /// send path needs no stack space for a `Message` of unknown size.
    @usableFromInline @inline(never)
    final func refuse(movingFrom source: UnsafeMutableRawPointer, reason: DeadLetterReason? = nil) {
        let message = Mailbox<Message>.take(from: source, boxed: false)
        system.publishDeadLetter(message, recipient: id, recipientName: name, reason: reason, wasQueued: false)
    }

    /// `tell` to a bounded mailbox: into the ring if it has room, else a dead letter with
    /// reason `.mailboxFull` (a stopped actor's: `.recipientStopped`).
    @usableFromInline @inline(never)
    final func deliverBounded(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        let (result, refused) = mailbox.tryEnqueue(Mailbox<Message>.take(from: source, boxed: false))
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

    /// See ``ActorRef/trySend(_:)``. Never overtakes senders waiting in ``ActorRef/send(_:)``.
    final func trySend(_ message: consuming Message) -> TrySendResult<Message> {
        if let waiters, waiters.count.load(ordering: .relaxed) > 0 {
            return isClosed ? .stopped(message) : .full(message)
        }
        let (result, refused) = waiters != nil ? mailbox.tryEnqueue(message) : mailbox.enqueue(message)
        switch result {
        case .accepted(let becameNonEmpty)?:
            if becameNonEmpty { scheduleSelf() }
            return .accepted
        case .closed?: return .stopped(refused!)
        case nil: return .full(refused!)
        }
    }

    /// See ``ActorRef/send(_:)``.
    final func send(_ message: consuming Message) async throws(SendError<Message>) {
        guard let waiters else {
            let (result, refused) = mailbox.enqueue(message)
            guard case .accepted(let becameNonEmpty) = result else { throw .stopped(refused!) }
            if becameNonEmpty { scheduleSelf() }
            return
        }
        if waiters.count.load(ordering: .relaxed) == 0 {
            let (result, refused) = mailbox.tryEnqueue(message)
            switch result {
            case .accepted(let becameNonEmpty)?:
                if becameNonEmpty { scheduleSelf() }
                return
            case .closed?: throw .stopped(refused!)
            case nil: try await waiters.send(refused!, into: mailbox, scheduling: self)
            }
        } else {
            try await waiters.send(message, into: mailbox, scheduling: self)
        }
    }

    /// `.immediately`: the mailbox closes now (later sends are dead letters) and the turn
    /// stops before its next message. `.afterDrainingMailbox`: the mailbox closes now and
    /// what it holds is handled first. Either way senders waiting for room in a bounded
    /// mailbox get their messages back now (`closeMailbox`: BoundedMailboxWaiters W4), not
    /// when the turn in hand ends: their messages were never in the mailbox.
    override final func stop(_ mode: StopMode) {
        closeMailbox()
        sendSystem(.stop(mode, .stopped))
    }

    override final func stopImmediately() { stop(.immediately) }

    /// A message of this actor's that will not be handled. `wasQueued`: it had been accepted
    /// into the mailbox (see ActorSystem.publishDeadLetter).
    /// After the cell left the registry its count is closed: a late arrival (a sender that
    /// passed the closed check before the close) is counted as sent when dead-lettered.
    final func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued && !leftRegistry)
    }

    // MARK: the turn

    override final func runTurn(budget: Int) -> TurnOutcome {
        let previousTurn = enterTurn()  // debug builds only (TurnConfinement T1)
        defer { leaveTurn(previousTurn) }
        // The common turn: a running cell, spawned with a specialised pass, with nothing
        // but mailbox messages to handle (no system message, no unstashed messages waiting,
        // unbounded). It is the general turn with every skipped step known to do nothing
        // (`budget` ≥ 1: the scheduler's throughput, SchedulerConfiguration.throughputRange).
        assert(budget > 0, "a turn with no budget")
        if case .running = phaseCode, !hasPriority, waiters == nil, case .some = mailboxPass, !hasSystemWork {
            // `mailboxPass!(…)` calls the stored closure without the retain and release of
            // its context that `if let` (a copy) costs; `self` keeps it alive. (Its presence
            // is tested with `case .some`: `!= nil` would reabstract the closure for the
            // generic comparison, a thunk allocated per turn in debug builds.)
            let outcome = mailboxPass!(self, budget)
            // What the behaviour did in the pass (stop, unstashAll) is for the general tail;
            // a running cell with nothing unstashed has nothing else to do.
            if case .running = phaseCode, !hasPriority { return outcome }
            return finishTurn(mailboxOutcome: outcome == .more ? .more : .empty, systemOutcome: .empty, ranMailbox: true)
        }
        return runGeneralTurn(budget: budget)
    }

    /// Any other turn, by every rule of the file comment (out of line: the common turn
    /// above then saves and restores fewer registers).
    @inline(never)
    final func runGeneralTurn(budget: Int) -> TurnOutcome {
        if isCreated { startIfNeeded() }
        var releaseRing = takeReleaseRequest()  // ActorSystem+Reclaim: a walk asked (the word…
        let systemOutcome = hasSystemWork ? drainSystem(releaseRequested: &releaseRing) : .empty  // …or a message)
        let mailboxOutcome: MPSCQueue.DrainOutcome
        let ranMailbox = !isStopped
        if !ranMailbox {
            mailboxOutcome = deadLetterMailbox(max: budget)
        } else {
            var remaining = budget
            if let extras = typedExtras, extras.hasPriority { remaining = runUnstashed(max: remaining) }
            if remaining > 0 {
                if case .some = mailboxPass {
                    mailboxOutcome = mailboxPass!(self, remaining) == .more ? .more : .empty
                } else {
                    mailboxOutcome = drainUnspecialised(max: remaining)
                }
            } else {
                // Budget spent on unstashed messages: the mailbox is visited next turn
                // (only drain may declare it idle).
                mailboxOutcome = hasPendingWork ? .more : .empty
            }
        }
        if releaseRing, mailboxOutcome == .empty, case .running = phaseCode { releaseMailboxRing() }
        return finishTurn(mailboxOutcome: mailboxOutcome, systemOutcome: systemOutcome, ranMailbox: ranMailbox)
    }

    /// The end of a turn (file comment, steps 4 and 5): bounded senders admitted and a
    /// draining cell stopped once empty (`ranMailbox`: the turn handled mailbox messages
    /// rather than dead-lettering them), a stopped and drained cell out of the registry.
    final func finishTurn(mailboxOutcome: MPSCQueue.DrainOutcome, systemOutcome: MPSCQueue.DrainOutcome,
                          ranMailbox: Bool) -> TurnOutcome {
        if ranMailbox {
            if let waiters, waiters.count.load(ordering: .relaxed) > 0, waiters.admit(into: mailbox) {
                scheduleSelf()  // room made and filled by waiting senders (BoundedMailboxWaiters W2)
            }
            if case .draining = phaseCode, mailboxOutcome == .empty, !hasPriority {
                advance(.mailboxDrained)
            }
        }
        if isStopped, mailboxOutcome == .empty {
            // Stopped and every message accounted for (delivered or dead-lettered).
            leaveRegistry()
        }
        let more = mailboxOutcome == .more || systemOutcome == .more
            || (!isStopped && hasPriority)
        return more ? .more : .idle
    }

    // The parts of a turn that hold a `Message` in unspecialised code, out of line: runTurn
    // itself then needs no stack space for a `Message` of unknown size.

    /// A stopped cell's turn: up to `max` mailbox messages become dead letters.
    @inline(never)
    final func deadLetterMailbox(max: Int) -> MPSCQueue.DrainOutcome {
        mailbox.take(max: max, boxed: boxed) { countUndelivered(1); deadLetter($0) }
    }

    /// Unstashed messages first (file comment, step 3); returns the budget left.
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

    /// The mailbox part of a turn for a cell spawned without a specialised pass.
    @inline(never)
    final func drainUnspecialised(max: Int) -> MPSCQueue.DrainOutcome {
        mailbox.take(max: max, boxed: boxed, lingering: true) { handleFromMailbox($0) }
    }

    /// See AnyActorCell.runAfterShutdown: stop, then dead-letter everything still here.
    override final func finishAfterShutdown() {
        advance(.shutdown)  // unless stopped: the stop dead-letters stash and priority
        let boxed = boxed
        while mailbox.take(max: Int.max, boxed: boxed, { countUndelivered(1); deadLetter($0) }) == .more {
            sched_yield()
        }  // a sender between claim and commit: a few instructions
        leaveRegistry()
    }

    /// True when the next mailbox message may go straight to `receive` (see "Specialised
    /// turns"): no system message pending (a stop is observed per message), not stopped,
    /// no `become` behaviour and no unstashed messages ahead of the mailbox. Turn only.
    @inlinable @inline(__always)
    final var isOnFastPath: Bool {
        if hasSystemWork { return false }
        if isStopped { return false }
        if let extras = typedExtras, extras.offFastPath { return false }  // a `become` or unstashed messages
        return true
    }

    /// The mailbox part of a specialised turn ("Specialised turns" in the file comment),
    /// for every cell whose behaviour is one call (`receive`: ActorCell's instance,
    /// ClosureActorCell's closure): the drain, the move out of the ring slot and the call
    /// become one function in the pass that inlines this. Turn only.
    /// Returns the drain's outcome as a turn's (MailboxPass).
    @inlinable @inline(__always)
    final func drainOnFastPath(max: Int, _ receive: (Message) throws -> Void) -> TurnOutcome {
        // A local function, not a closure literal, so that it can be forced inline.
        @inline(__always) func handle(_ message: Message) {
            if isOnFastPath { invokeOnFastPath(message, receive) } else { handleFromMailbox(message) }
        }
        return mailbox.take(max: max, lingering: true, signallingUnit: true, handle) == .more ? .more : .idle
    }

    /// `invoke` for the fast path: runs `receive` (the mailbox counted the message: file
    /// comment, "Accounting"), and hands failures and stops requested inside it to the
    /// unspecialised code. Turn only.
    @inlinable @inline(__always)
    final func invokeOnFastPath(_ message: Message, _ receive: (Message) throws -> Void) {
        do {
            try receive(message)
        } catch {
            handleFailure(error)
        }
        if pendingStop != nil { finishPendingStop() }
    }

    /// One mailbox message, by the full rules (file comment, step 3). Turn only.
    @usableFromInline @inline(never)
    final func handleFromMailbox(_ message: consuming Message) {
        if hasSystemWork { _ = drainSystem() }  // a stop observed per message
        if isStopped {
            countUndelivered(1)
            deadLetter(message)
        } else if let extras = typedExtras, extras.hasPriority {
            countUndelivered(1)  // handed over later, from the priority list
            extras.priority.append(message)
            updateHeldBack()
        } else {
            invoke(message)
        }
    }

    /// Publishes the change in stash + unstashed count to the system's `heldBack` (turn only).
    final func updateHeldBack() {
        guard let extras = typedExtras else { return }
        let count = extras.stashed.count + extras.priorityCount - extras.priorityIndex
        let delta = count - extras.heldBack
        if delta != 0 {
            extras.heldBack = count
            system.heldBack.wrappingAdd(delta, ordering: .relaxed)
        }
    }

    /// Stashing hands the message back: it is counted as delivered again when it is handled
    /// after `unstashAll`, or as a dead letter if the actor stops first.
    final func stash(_ message: Message) {
        typed.stashed.append(message)
        countUndelivered(1)
        updateHeldBack()
    }

    /// Adds `delta` to `undelivered` (file comment, "Accounting"). Turn only.
    @inline(__always)
    final func countUndelivered(_ delta: Int) {
        undelivered.store(undelivered.load(ordering: .relaxed) &+ delta, ordering: .relaxed)
    }

    /// Messages handed to the behaviour so far: taken from the mailbox, less `undelivered`
    /// (file comment, "Accounting"). A snapshot from other threads; exact once the cell's
    /// turns have ended.
    override final var deliveredCount: Int {
        dequeuedCount &- undelivered.load(ordering: .relaxed)
    }

    /// Runs one message through the current behaviour; failures go to the supervisor. The
    /// caller accounts for it ("Accounting": nothing to do for a message just taken from
    /// the mailbox, which the mailbox counted before the hand-off, so a stop inside the
    /// behaviour retires an exact count).
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

    // MARK: overridden by ActorCell<A>

    func receive(_ message: Message) throws {}

    // MARK: AnyActorCell hooks

    override final func closeMailbox() {
        markClosed()
        waiters?.failAll()  // after the close (W4): senders waiting for room get their messages back
    }

    override final func resetBehaviourState() {
        guard let extras = typedExtras else { return }
        extras.becomeStack = []
        // Stashed messages of a stopping or restarting actor are not lost: they are
        // dead-lettered when it stops, and kept in order (ahead of the mailbox) when it restarts.
        if isStopped {
            for message in stashed { deadLetter(message) }
            for message in priority[priorityIndex...] { deadLetter(message) }
            priority = []
            priorityIndex = 0
        } else {
            unstashAll()
        }
        stashed = []
        updateHeldBack()
    }

    override final func handleTerminated(_ t: Terminated) {
        guard watching.remove(t.id) != nil else { return }
        if let message = watchMessages.removeValue(forKey: t.id) {
            system.runtimeSent.wrappingAdd(1, ordering: .relaxed)  // sent by the runtime
            countUndelivered(-1)  // handed over, not taken from the mailbox
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

/// The cell of an `EventActor` instance.
@usableFromInline
final class ActorCell<A: EventActor>: ActorCellBase<A.Message>, @unchecked Sendable {
    /// Makes a fresh instance on every restart; nil once stopped, and for a stateless
    /// actor spawned with one instance to reuse (no factory). Turn-confined.
    var factory: (@Sendable () -> A)?
    /// The current instance (replaced on restart, nil once stopped). Turn-confined.
    @exclusivity(unchecked) @usableFromInline var instance: A?

    /// Parameters are borrowed (`__shared`), as in AnyActorCell.init; `mailbox` is the
    /// shape of the cell's own mailbox queue (see ActorCellBase.init).
    @usableFromInline
    init(id: ActorID, name: __shared String?, system: __shared ActorSystem, parent: __shared AnyActorCell?,
         supervisor: __shared SupervisorStrategy?, mailbox: MPSCQueue.Shape, mailboxPass: MailboxPass?,
         bounded: Bool, instance: __shared A, factory: (@Sendable () -> A)?) {
        self.factory = factory
        self.instance = instance
        super.init(id: id, name: name, system: system, parent: parent, supervisor: supervisor,
                   mailbox: mailbox, mailboxPass: mailboxPass, bounded: bounded)
    }

    /// The mailbox pass for `A`, specialised where it is formed: the @inlinable spawn
    /// entry points, in the user's module (see "Specialised turns" in the file comment).
    @inlinable
    static var specializedMailboxPass: MailboxPass {
        { base, max in
            let cell = unsafeDowncast(base, to: ActorCell<A>.self)
            return cell.drainOnFastPath(max: max) { message in
                // Set until stopped, and only replaced or released after `receive` returns (a
                // restart by handleFailure, a stop by finishPendingStop): the cell's own
                // reference keeps it alive for the call, so no retain/release pair is needed.
                try Unmanaged.passUnretained(cell.instance.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
                    try $0.receive(message, context: ActorContext(cell: cell))
                }
            }
        }
    }

    override func receive(_ message: A.Message) throws {
        try instance.unsafelyUnwrapped.receive(message, context: ActorContext(cell: self))  // set until stopped
    }

    override func receiveSignal(_ signal: Signal) throws {
        try instance?.receiveSignal(signal, context: ActorContext(cell: self))
    }

    override func startInstance() throws {
        if instanceStarted, let factory { instance = factory() }  // a restart: fresh state (no factory: the one instance is kept)
        instanceStarted = true
        try instance?.preStart(context: ActorContext(cell: self))
    }

    override func stopInstance() {
        instance?.postStop(context: ActorContext(cell: self))
    }

    override func releaseInstance() {
        instance = nil
        factory = nil
    }

    @usableFromInline override var childSupervisor: SupervisorStrategy { instance?.supervisorStrategy ?? system.defaultSupervisor }
}
