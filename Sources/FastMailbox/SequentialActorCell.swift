// SequentialActorCell: the cell of a thread-style actor. Its behaviour is one async body
// that loops on `inbox.receive()`, run as a task that prefers the scheduler's task
// executor. It holds a worker only while it computes; an empty receive parks the task on
// a continuation, and the sender that makes the mailbox non-empty resumes it.
//
// Who consumes the mailbox (the MPSCQueue's single consumer):
//  (C1) while the body runs: the body's task, through Inbox. The executor orders a task's
//       jobs, so it is one consumer even when it hops between workers.
//  (C2) once the body ended (phase `ended` or `endedBeforeStart`): the cell's turn, which
//       dead-letters what is left. The task's last drain happens-before its release CAS
//       to `ended`, which happens-before the turn's acquire load that sees it.
//
// The wake word (`wake`, layout in SequentialWake) holds the body's phase, flags and the
// generation of the current wait. Every phase change is an acq_rel RMW of it, so all
// fall in one total order. Rules:
//  (Q1) The consumer parks only after a drain found the mailbox empty, by CAS
//       awake → parked after storing `waiter`. A phase of `signalled` makes it look again.
//  (Q2) The sender that took the mailbox from idle (`becameNonEmpty`) calls `wakeBody`:
//       parked → awake and resume, awake → signalled, signalled → unchanged (still an RMW,
//       so its release orders the enqueue). Other senders touch no word.
//  (Q3) Whoever CASes out of `parked` resumes `waiter`, so each continuation is resumed
//       exactly once. Resumers: senders, stop and close, a timer whose generation
//       still matches, and a ring-release request.
//  (Q4) Cancellation only ORs `taskCancelled` in: the handler may run under the task's
//       status-record lock, so it must not resume. A cancelled task does not park.
//  (Q5) startBody CASes notStarted → awake, then publishes the task (`taskPublished`);
//       stop(.immediately) sets `cancelRequested`. Both are RMWs, so exactly one sees the
//       other's flag and cancels. A stop that lands first makes the body never start
//       (`endedBeforeStart`), and the same turn ends the cell.
// Why no wake-up is lost: Q1 and Q2's CASes are ordered. Sender first: the consumer sees
// `signalled` (acquire: the message is visible) and does not park. Consumer first: the
// sender sees `parked` (acquire: `waiter` is visible). Every later enqueue lands behind
// that idle→busy sender.
//
// Stop and end:
//  - stop(.immediately) closes the mailbox, makes every receive throw, wakes the body and
//    cancels its task (Q5). stop(.afterDrainingMailbox) and shutdown close the mailbox and
//    wake the body; receive returns what is left, then throws ActorStoppedError.
//  - At the body's end the task closes the mailbox, dead-letters the Inbox's buffer,
//    stores the reason, then the phase `ended` (C2), and schedules the cell. That turn
//    runs the stop and leaves the registry only once the mailbox drained empty. So
//    `.terminated` means the body runs no more code, and the books balance.
//  - After the scheduler shut down, an ended or unstarted body gets the final drain on
//    the caller's thread; a running one keeps the mailbox (C1) until it ends.
//
// Giving the ring back: a walk's request sets `releaseRequested` (waking a parked body,
// Q3). The body, about to park after an empty drain, gives the ring back itself, since
// only the consumer may (MPSCQueue.swift).
//
// The receive path is @inlinable so it is specialised in the body's module; its one
// suspension is the continuation. The costs behind these choices: the "Actor cells"
// article (FastMailbox.docc/ActorCells.md).

import Dispatch
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline
final class SequentialActorCell<Message: Sendable>: AnyActorCell, MessageRecipient, @unchecked Sendable {
    // @unchecked: mutable state is atomic, ordered by `wake`, turn-confined
    // (AnyActorCell C2), or the MPSCQueue's consumer side (C1/C2 above).

    typealias Body = @Sendable (Inbox<Message>) async throws -> Void

    // The protocol's types live outside this generic class: nested, every use would
    // instantiate generic metadata.
    @usableFromInline typealias WakeReason = SequentialWakeReason
    typealias Wake = SequentialWake

    /// The user mailbox; its queue is the cell itself, as in ActorCellBase.
    @inlinable final var mailbox: Mailbox<Message> { @inline(__always) get { Mailbox(queue: self) } }
    let body: Body
    /// Messages handed to the body so far. Written only by the body's task (C1).
    @usableFromInline let delivered = Atomic<Int>(0)
    /// The wake word (Q1–Q5, SequentialWake).
    let wake = Atomic<UInt64>(Wake.notStarted)
    /// The parked receive's continuation: written by the consumer before its CAS to
    /// `parked`, read by whoever CASes out of `parked` (Q3).
    @exclusivity(unchecked) var waiter: UnsafeContinuation<WakeReason, Never>?
    /// The body's task: written once by startBody before it sets `taskPublished`; read by
    /// requestStop only after seeing that flag.
    @exclusivity(unchecked) var bodyTask: Task<Void, any Error>?
    /// Why the body ended: written by the task before it stores the phase `ended`; read by
    /// the turn only after loading that phase.
    @exclusivity(unchecked) var ended: TerminationReason?
    /// Set (release) by stop(.immediately) before it wakes the body; read (acquire) by
    /// every receive.
    @usableFromInline let immediateStop = Atomic<Bool>(false)
    /// `stop(_:)` was called (as opposed to a close by shutdown). Any thread.
    let stopRequested = Atomic<Bool>(false)
    /// True when `Message` travels boxed (MessageEncoding). Placed beside the two flags
    /// above so it shares their word.
    @usableFromInline let boxed = Mailbox<Message>.isBoxed
    /// Messages the Inbox set aside (selective receive). Written by the consumer task only;
    /// read by shutdown to count what is left.
    let buffered = Atomic<Int>(0)

    /// `mailbox`: the validated shape of the cell's own mailbox queue (ActorSystem.mailboxShape).
    init(id: ActorID, name: String?, system: ActorSystem, mailbox: MPSCQueue.Shape, body: @escaping Body) {
        self.body = body
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: mailbox, traits: .stopWord)
    }

    // MARK: MessageRecipient (any thread)

    override var mailboxDepth: Int { approximateCount + buffered.load(ordering: .relaxed) }

    /// Inlinable and never inlined, so it is specialised for `Message` in the sender's
    /// module, as ActorCellBase.deliver(movingFrom:) is.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch mailbox.enqueue(movingFrom: source, boxed: boxed) {
        case .accepted(let becameNonEmpty):
            // The idle→busy sender's duty (Q2): wake the body, or get a turn to start it
            // or dead-letter.
            if becameNonEmpty, !wakeBody(.signalled) { scheduleSelf() }
            return true
        case .closed:
            deadLetter(Mailbox<Message>.take(from: source, boxed: false), wasQueued: false)
            return false
        }
    }

    override func stop(_ mode: StopMode) {
        requestStop(mode, explicit: true)
    }

    /// A message of this actor's that will not be handled. The turn's drains pass
    /// `wasQueued: !leftRegistry` (see ActorCellBase.deadLetter).
    @usableFromInline func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued)
    }

    // MARK: wake-ups (any thread)

    /// Wakes the body (Q2): resumes a parked receive with `reason`, or leaves `signalled`.
    /// False when no body runs; the caller then decides whether the cell needs a turn.
    /// Lock-free: a CAS loop on `wake`.
    @discardableResult
    @usableFromInline final func wakeBody(_ reason: WakeReason) -> Bool {
        var word = wake.load(ordering: .relaxed)
        while true {
            let next: UInt64
            switch Wake.phase(word) {
            case Wake.parked: next = Wake.replacingPhase(of: word, with: Wake.awake)
            case Wake.awake: next = Wake.replacingPhase(of: word, with: Wake.signalled)
            case Wake.signalled: next = word  // still an RMW: its release orders this sender's enqueue
            default: return false
            }
            let (exchanged, original) = wake.compareExchange(expected: word, desired: next, ordering: .acquiringAndReleasing)
            guard exchanged else { word = original; continue }
            if Wake.phase(word) == Wake.parked { waiter.unsafelyUnwrapped.resume(returning: reason) }
            return true
        }
    }

    /// Closes the mailbox and wakes a parked receive; `.immediately` also makes every
    /// receive throw and cancels the body's task. Idempotent; any thread.
    func requestStop(_ mode: StopMode, explicit: Bool) {
        markClosed()
        if explicit { stopRequested.store(true, ordering: .releasing) }
        if mode == .immediately { immediateStop.store(true, ordering: .releasing) }
        wakeBody(.stopped)
        if mode == .immediately {
            let before = wake.bitwiseOr(Wake.cancelRequested, ordering: .acquiringAndReleasing).oldValue
            if before & Wake.taskPublished != 0, before & Wake.cancelRequested == 0 { bodyTask?.cancel() }
        }
    }

    // MARK: consumer side (the body's task only, C1)

    override final var deliveredCount: Int { delivered.load(ordering: .relaxed) }

    /// Counts one message handed to the body.
    @inlinable @inline(__always)
    final func countDelivered() {
        delivered.store(delivered.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Suspends the body until a sender, a stop or a cancellation wakes it; returns at once
    /// if one already happened. Inlinable and isolated to the caller's `isolation`: the
    /// hop back after the continuation names the caller's executor, so the optimizer
    /// drops the caller's own hops.
    @inlinable
    final func park(isolation: isolated (any Actor)?) async -> WakeReason {
        // Resumed exactly once (Q3). The executor-inheriting form avoids a hop, and so a
        // status-record lock, before creating the continuation.
        let reason = await _unsafeInheritExecutor_withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            _ = suspend(continuation)
        }
        threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
        return reason
    }

    /// Waits like `park(isolation:)`. With a deadline (uptime nanoseconds), a timer resumes
    /// the wait with `.timedOut` unless something else resumed it first (Q3).
    nonisolated(nonsending) final func park(deadline: UInt64?) async -> WakeReason {
        var timer: DispatchWorkItem?
        let reason = await withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            // No deadline, or one centuries away (a huge timeout, saturated): no timer.
            guard let generation = suspend(continuation), let deadline,
                  deadline < DispatchTime.now().uptimeNanoseconds &+ UInt64(Int64.max) / 1_000 else { return }
            let item = DispatchWorkItem { [weak self] in self?.expireWaiter(generation: generation) }
            timer = item
            DispatchQueue.global().asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline), execute: item)
        }
        threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
        timer?.cancel()
        return reason
    }

    /// The consumer's half of the protocol (Q1), inside withUnsafeContinuation: parks and
    /// returns the wait's generation, or resumes `continuation` at once and returns nil.
    @usableFromInline
    final func suspend(_ continuation: UnsafeContinuation<WakeReason, Never>) -> UInt64? {
        waiter = continuation
        var word = wake.load(ordering: .acquiring)
        while true {
            let immediate: WakeReason
            switch Wake.phase(word) {
            case Wake.signalled:
                let awake = Wake.replacingPhase(of: word, with: Wake.awake)
                let (exchanged, original) = wake.compareExchange(expected: word, desired: awake, ordering: .acquiringAndReleasing)
                guard exchanged else { word = original; continue }
                immediate = .signalled
            case Wake.awake:
                if immediateStop.load(ordering: .acquiring) || isClosed {
                    immediate = .stopped
                } else if word & Wake.taskCancelled != 0 {
                    immediate = .cancelled
                } else {
                    // A walk asked for the ring back: out of line, so this path keeps its registers.
                    if _slowPath(word & Wake.releaseRequested != 0) { return releaseRingThenSuspend(continuation) }
                    let parked = Wake.parking(word)
                    let (exchanged, original) = wake.compareExchange(expected: word, desired: parked, ordering: .acquiringAndReleasing)
                    guard exchanged else { word = original; continue }
                    #if DEBUG
                    SequentialSuspendTestHook.pauseIfArmed(self)
                    #endif
                    return Wake.generation(parked)  // from here on a resumer owns `waiter`
                }
            default:
                preconditionFailure("SequentialActorCell: a receive on a body that is not running (phase \(Wake.phase(word)))")
            }
            waiter = nil
            continuation.resume(returning: immediate)
            return nil
        }
    }

    private func expireWaiter(generation: UInt64) {
        var word = wake.load(ordering: .relaxed)
        while Wake.phase(word) == Wake.parked, Wake.generation(word) == generation {
            let awake = Wake.replacingPhase(of: word, with: Wake.awake)
            let (exchanged, original) = wake.compareExchange(expected: word, desired: awake, ordering: .acquiringAndReleasing)
            if exchanged {
                waiter.unsafelyUnwrapped.resume(returning: .timedOut)
                return
            }
            word = original
        }
    }

    /// Gives the mailbox's ring back: the body's task only (C1), right after an empty
    /// drain. A producer that claimed meanwhile makes it give up. Then clears
    /// `releaseRequested` and suspends as usual; no drain ran since the caller's.
    @inline(never)
    private func releaseRingThenSuspend(_ continuation: UnsafeContinuation<WakeReason, Never>) -> UInt64? {
        releaseMailboxRing()
        wake.bitwiseAnd(~Wake.releaseRequested, ordering: .acquiringAndReleasing)
        return suspend(continuation)
    }

    /// A walk asked for the ring back: sets `releaseRequested` for the body's next park and
    /// wakes a parked body (Q3), which looks again and gives the ring back before parking.
    /// A body not running has no ring to give. Any thread.
    private func requestRingRelease() {
        var word = wake.load(ordering: .relaxed)
        while true {
            let next: UInt64
            switch Wake.phase(word) {
            case Wake.parked: next = Wake.replacingPhase(of: word, with: Wake.awake) | Wake.releaseRequested
            case Wake.awake, Wake.signalled: next = word | Wake.releaseRequested
            default: return
            }
            let (exchanged, original) = wake.compareExchange(expected: word, desired: next, ordering: .acquiringAndReleasing)
            guard exchanged else { word = original; continue }
            if Wake.phase(word) == Wake.parked { waiter.unsafelyUnwrapped.resume(returning: .signalled) }
            return
        }
    }

    /// The error a receive throws once the actor is stopping.
    @usableFromInline
    final func stoppedError() -> any Error { ActorStoppedError(actorName: name, actorID: id) }

    /// The error a receive throws when its task was cancelled and it would have to wait.
    @usableFromInline
    final func cancelledError() -> any Error {
        immediateStop.load(ordering: .acquiring) ? stoppedError() : CancellationError()
    }

    /// Why the body ended, given how (`error` nil: it returned).
    func terminationReason(after error: (any Error)?) -> TerminationReason {
        let stopRequested = stopRequested.load(ordering: .acquiring)
        switch error {
        case nil:
            return stopRequested ? .stopped : .finished
        case is ActorStoppedError, is CancellationError:
            return stopRequested || !system.isShuttingDown ? .stopped : .systemShutDown
        case let error?:
            return .failed(String(describing: error))
        }
    }

    /// The task's last act, out of line: dead-letters what the Inbox set aside and hands
    /// the mailbox to the turn (C2), which finalizes the stop.
    @inline(never)
    func bodyDidEnd(_ reason: TerminationReason, inbox: Inbox<Message>) {
        markClosed()
        inbox.finish()
        ended = reason
        var word = wake.load(ordering: .relaxed)
        while true {  // release: `ended` and the task's last drain, before the turn (C2)
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: Wake.ended), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        scheduleSelf()
    }

    // MARK: the turn (system messages, start, final stop, dead letters)

    override func runTurn(budget: Int) -> TurnOutcome {
        var releaseRing = takeReleaseRequest()  // ActorSystem+Reclaim: the request word…
        let systemOutcome = drainSystem(releaseRequested: &releaseRing)  // …or message
        if isCreated {
            advance(.start)
            startBody()
        }
        if releaseRing { requestRingRelease() }
        var mailboxOutcome = MPSCQueue.DrainOutcome.empty
        if let ended = endedReason() {
            finalize(ended)
            let counted = !leftRegistry
            mailboxOutcome = mailbox.take(max: budget, boxed: boxed) { deadLetter($0, wasQueued: counted) }
            if mailboxOutcome == .empty { leaveRegistry() }  // every message accounted for
        }
        return systemOutcome == .more || mailboxOutcome == .more ? .more : .idle
    }

    /// Why the body ended, if it has (a body that never started counts as ended once the
    /// cell stopped, or when `forShutdown`).
    private func endedReason(forShutdown: Bool = false) -> TerminationReason? {
        var word = wake.load(ordering: .acquiring)
        while true {
            switch Wake.phase(word) {
            case Wake.ended:
                return ended
            case Wake.endedBeforeStart:
                return .stopped
            case Wake.notStarted where isStopped || forShutdown:
                let (exchanged, original) = wake.compareExchange(
                    expected: word, desired: Wake.replacingPhase(of: word, with: Wake.endedBeforeStart),
                    ordering: .acquiringAndReleasing)
                if exchanged { return forShutdown ? .systemShutDown : .stopped }  // stopped before the body started
                word = original
            default:
                return nil
            }
        }
    }

    /// The body ended: run the cell's stop (watchers, parent) once (ignored if a stop came
    /// first; a draining cell keeps its reason unless the body failed: ActorLifecycle).
    private func finalize(_ ended: TerminationReason) {
        advance(.ended, ended)
    }

    /// After the scheduler shut down: the final drain on the caller's thread, unless the
    /// body still runs and so still owns the mailbox (C1).
    override func finishAfterShutdown() {
        guard let ended = endedReason(forShutdown: true) else { return }
        if isCreated { advance(.shutdown) } else { finalize(ended) }  // created: it never started
        let counted = !leftRegistry
        while mailbox.take(max: Int.max, boxed: boxed, { deadLetter($0, wasQueued: counted) }) == .more {
            sched_yield()
        }  // a sender between claim and commit finishes shortly
        leaveRegistry()
    }

    /// Starts the body's task (first turn), unless an immediate stop came first.
    private func startBody() {
        var word = wake.load(ordering: .acquiring)
        var next: UInt64
        while true {
            guard Wake.phase(word) == Wake.notStarted else { return }
            // cancelRequested: a stop(.immediately) came first (it set immediateStop before).
            let stopped = word & Wake.cancelRequested != 0 || immediateStop.load(ordering: .acquiring)
            next = stopped ? Wake.endedBeforeStart : Wake.awake
            #if DEBUG
            SequentialStartTestHook.pauseIfArmed(self)
            #endif
            // A failed CAS is a stop that set cancelRequested meanwhile: look again (Q5).
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: next), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        guard next == Wake.awake else { return }
        // Keep the task's first allocator slab for the body's frames: a non-throwing
        // operation would add a reabstraction thunk, and the body's run is this closure
        // (allocated with the task), not a method call. It captures only the cell.
        let task = Task<Void, any Error>(executorPreference: system.scheduler.taskExecutor) { [self] in
            let inbox = Inbox(cell: self)
            var failure: (any Error)?
            do {
                try await withTaskCancellationHandler {
                    try await body(inbox)
                } onCancel: { [self] in
                    // Only the flag (Q4): the status-record lock may be held.
                    wake.bitwiseOr(Wake.taskCancelled, ordering: .releasing)
                }
            } catch {
                failure = error
            }
            bodyDidEnd(terminationReason(after: failure), inbox: inbox)
        }
        bodyTask = task
        let before = wake.bitwiseOr(Wake.taskPublished, ordering: .acquiringAndReleasing).oldValue
        if before & Wake.cancelRequested != 0 { task.cancel() }  // a stop(.immediately) came first
    }

    // MARK: AnyActorCell hooks

    /// Shutdown (any thread) and stop handling: later sends go to dead letters; a receive
    /// returns what is queued, then throws ActorStoppedError.
    override func closeMailbox() { requestStop(.afterDrainingMailbox, explicit: false) }

    /// Run by finalizeStop. Normally the body has already ended; if a `.stop(.immediately)`
    /// system message ever finalizes the cell first, the body is stopped as well.
    override func stopInstance() { requestStop(.immediately, explicit: false) }

    override var heldOutsideQueue: Int { buffered.load(ordering: .relaxed) }
    override func stopImmediately() { stop(.immediately) }
}

/// Why a parked receive was resumed.
@usableFromInline
enum SequentialWakeReason: Sendable { case signalled, stopped, timedOut, cancelled }

/// The layout of SequentialActorCell's `wake` word: bits 0–2 the body's phase, bit 3
/// `taskPublished`, bit 4 `cancelRequested`, bit 5 `taskCancelled`, bit 6
/// `releaseRequested`, bits 7–63 the generation of the current (or last) wait.
enum SequentialWake {
    static let phaseMask: UInt64 = 0b111
    static let notStarted: UInt64 = 0
    /// The body runs (or is queued to run) and has not parked.
    static let awake: UInt64 = 1
    /// The body waits in `waiter`.
    static let parked: UInt64 = 2
    /// Something happened since the body last looked: its next park looks again instead.
    static let signalled: UInt64 = 3
    /// The body ended; `ended` holds why. The turn owns the mailbox (C2).
    static let ended: UInt64 = 4
    /// Stopped before the body started: it never will.
    static let endedBeforeStart: UInt64 = 5
    static let taskPublished: UInt64 = 1 << 3
    static let cancelRequested: UInt64 = 1 << 4
    /// The body's task was cancelled (the cancellation handler startBody's task registers).
    static let taskCancelled: UInt64 = 1 << 5
    /// A walk asked for the mailbox's ring back: the body's next park gives it back first
    /// (a request, not a state: the parking CAS clears it).
    static let releaseRequested: UInt64 = 1 << 6
    static let generationShift: UInt64 = 7

    @inline(__always) static func phase(_ word: UInt64) -> UInt64 { word & phaseMask }
    @inline(__always) static func generation(_ word: UInt64) -> UInt64 { word >> generationShift }
    @inline(__always) static func replacingPhase(of word: UInt64, with phase: UInt64) -> UInt64 {
        (word & ~phaseMask) | phase
    }
    /// `word` (awake) as parked in the next generation (wrapping), flags kept but
    /// `releaseRequested` (the park that sees it has acted on it).
    @inline(__always) static func parking(_ word: UInt64) -> UInt64 {
        let flags = word & (taskPublished | cancelRequested | taskCancelled)
        return ((generation(word) &+ 1) << generationShift) | flags | parked
    }
}

#if DEBUG
/// Debug builds only: runs an action on the body's thread after its wait is published and
/// before the body reaches its `await`, so a test can resume the wait early. Stays armed
/// until disarmed.
enum SequentialSuspendTestHook {
    private static let point = SystemHookPoint()

    /// Every wait published by a body of `system` runs `action` there, until `disarm()`.
    static func arm(_ system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func pauseIfArmed(_ cell: AnyActorCell) { point.fire(for: cell.system) }
}

/// Debug builds only: pauses a sequential actor's next first turn between startBody's look
/// at the wake word and its CAS, so a test can run a stop in that gap (Q5).
enum SequentialStartTestHook {
    private static let armed = Lock<(system: ObjectIdentifier, action: @Sendable (AnyActorCell) -> Void)?>(nil)

    /// The next startBody of a cell of `system` runs `action(cell)` in that gap; then the
    /// hook disarms itself.
    static func arm(_ system: ActorSystem, _ action: @escaping @Sendable (AnyActorCell) -> Void) {
        armed.withLock { $0 = (ObjectIdentifier(system), action) }
    }

    static func pauseIfArmed(_ cell: AnyActorCell) {
        let system = ObjectIdentifier(cell.system)
        let action = armed.withLock { armed -> (@Sendable (AnyActorCell) -> Void)? in
            guard let current = armed, current.system == system else { return nil }
            armed = nil
            return current.action
        }
        action?(cell)
    }
}
#endif
