// SequentialActorCell: the cell of a thread-style actor. Its behaviour is one async body
// that loops on `inbox.receive()`, run as a task on the scheduler's task executor. An
// empty receive parks the task on a continuation; the sender that makes the mailbox
// non-empty resumes it.
//
// Who consumes the mailbox (the MPSCQueue's single consumer):
//  (C1) while the body runs: the body's task, through Inbox. The executor orders a task's
//       jobs, so it is one consumer even when it hops between workers.
//  (C2) once the body ended: the cell's turn, which dead-letters what is left. The task's
//       last drain happens-before its release CAS to `ended`, which happens-before the
//       turn's acquire load that sees it.
//
// The wake word (`wake`, SequentialWake) holds the body's phase, flags and the wait's
// generation. Every change is an acq_rel RMW of it, so all fall in one total order.
//  (Q1) The consumer parks only after an empty drain, by CAS awake → parked after storing
//       `waiter`. `signalled` makes it look again instead.
//  (Q2) The sender that took the mailbox from idle calls `wakeBody`: parked → awake and
//       resume, awake → signalled. Other senders touch no word.
//  (Q3) Whoever CASes out of `parked` resumes `waiter`: exactly once.
//  (Q4) Cancellation only sets `taskCancelled`; a cancelled task does not park.
//  (Q5) startBody's publish of the task and stop's `cancelRequested` are both RMWs, so
//       exactly one sees the other's flag and cancels.
// No wake-up is lost: Q1's and Q2's CASes are ordered, and each side's acquire sees the
// other's message or continuation. The full argument, stop and end, and the costs:
// FastMailbox.docc/ActorCells.md, "Sequential actors".

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
    // @unchecked: mutable state is atomic, ordered by `wake`, turn-confined, or the
    // queue's consumer side (C1, C2).

    typealias Body = @Sendable (Inbox<Message>) async throws -> Void

    // The protocol's types live outside this generic class, so using them instantiates no
    // generic metadata.
    @usableFromInline typealias WakeReason = SequentialWakeReason
    typealias Wake = SequentialWake

    @inlinable final var mailbox: Mailbox<Message> { @inline(__always) get { Mailbox(queue: self) } }
    let body: Body
    /// Messages handed to the body so far. Written only by the body's task.
    @usableFromInline let delivered = Atomic<Int>(0)
    /// The wake word (Q1–Q5, SequentialWake).
    let wake = Atomic<UInt64>(Wake.notStarted)
    /// The parked receive's continuation: written by the consumer before its CAS to
    /// `parked`, read by whoever CASes out of `parked` (Q3).
    @exclusivity(unchecked) var waiter: UnsafeContinuation<WakeReason, Never>?
    /// The body's task: written once by startBody before `taskPublished`; read by
    /// requestStop only after seeing that flag.
    @exclusivity(unchecked) var bodyTask: Task<Void, any Error>?
    /// Why the body ended: written before the phase `ended`, read only after it.
    @exclusivity(unchecked) var ended: TerminationReason?
    /// Set (release) by stop(.immediately) before it wakes the body; read (acquire) by
    /// every receive.
    @usableFromInline let immediateStop = Atomic<Bool>(false)
    /// `stop(_:)` was called, not a close by shutdown. Any thread.
    let stopRequested = Atomic<Bool>(false)
    /// True when `Message` travels boxed. Beside the two flags so it shares their word.
    @usableFromInline let boxed = Mailbox<Message>.isBoxed
    /// Messages the Inbox set aside. Written by the body's task; read by shutdown.
    let buffered = Atomic<Int>(0)

    init(id: ActorID, name: String?, system: ActorSystem, mailbox: MPSCQueue.Shape, body: @escaping Body) {
        self.body = body
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: mailbox, traits: .stopWord)
    }

    // MARK: MessageRecipient (any thread)

    override var mailboxDepth: Int { approximateCount + buffered.load(ordering: .relaxed) }

    /// Inlinable and never inlined, so it is specialised in the sender's module.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch mailbox.enqueue(movingFrom: source, boxed: boxed) {
        case .accepted(let becameNonEmpty):
            // Q2: wake the body, or get a turn to start it or dead-letter.
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

    /// A message of this actor's that will not be handled (see ActorCellBase.deadLetter).
    @usableFromInline func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued)
    }

    // MARK: wake-ups (any thread)

    /// Wakes the body (Q2). False when no body runs; the caller then decides whether the
    /// cell needs a turn. Lock-free: a CAS loop on `wake`.
    @discardableResult
    @usableFromInline final func wakeBody(_ reason: WakeReason) -> Bool {
        var word = wake.load(ordering: .relaxed)
        while true {
            let next: UInt64
            switch Wake.phase(word) {
            case Wake.parked: next = Wake.replacingPhase(of: word, with: Wake.awake)
            case Wake.awake: next = Wake.replacingPhase(of: word, with: Wake.signalled)
            case Wake.signalled: next = word  // still an RMW: its release orders the enqueue
            default: return false
            }
            let (exchanged, original) = wake.compareExchange(expected: word, desired: next, ordering: .acquiringAndReleasing)
            guard exchanged else { word = original; continue }
            if Wake.phase(word) == Wake.parked { waiter.unsafelyUnwrapped.resume(returning: reason) }
            return true
        }
    }

    /// Closes the mailbox and wakes a parked receive; `.immediately` also makes receives
    /// throw and cancels the body's task. Idempotent; any thread.
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

    @inlinable @inline(__always)
    final func countDelivered() {
        delivered.store(delivered.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Suspends the body until a sender, a stop or a cancellation wakes it. Isolated to
    /// the caller's `isolation`, so the optimizer drops the caller's own hops.
    @inlinable
    final func park(isolation: isolated (any Actor)?) async -> WakeReason {
        // Resumed exactly once (Q3). The executor-inheriting form saves a hop.
        let reason = await _unsafeInheritExecutor_withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            _ = suspend(continuation)
        }
        threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
        return reason
    }

    /// Waits like `park(isolation:)`; with a deadline, a timer resumes the wait with
    /// `.timedOut` unless something else resumed it first (Q3).
    nonisolated(nonsending) final func park(deadline: UInt64?) async -> WakeReason {
        var timer: DispatchWorkItem?
        let reason = await withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            // No deadline, or a saturated one: no timer.
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

    /// The consumer's half of Q1: parks and returns the wait's generation, or resumes
    /// `continuation` at once and returns nil.
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
                    // Out of line, so this path keeps its registers.
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

    /// Gives the ring back (the body's task only, after an empty drain), clears
    /// `releaseRequested` and suspends as usual.
    @inline(never)
    private func releaseRingThenSuspend(_ continuation: UnsafeContinuation<WakeReason, Never>) -> UInt64? {
        releaseMailboxRing()
        wake.bitwiseAnd(~Wake.releaseRequested, ordering: .acquiringAndReleasing)
        return suspend(continuation)
    }

    /// Sets `releaseRequested` for the body's next park and wakes a parked body (Q3). A
    /// body not running has no ring to give. Any thread.
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

    @usableFromInline
    final func stoppedError() -> any Error { ActorStoppedError(actorName: name, actorID: id) }

    /// The error a cancelled receive throws when it would have to wait.
    @usableFromInline
    final func cancelledError() -> any Error {
        immediateStop.load(ordering: .acquiring) ? stoppedError() : CancellationError()
    }

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

    /// The task's last act: dead-letters what the Inbox set aside and hands the mailbox to
    /// the turn (C2).
    @inline(never)
    func bodyDidEnd(_ reason: TerminationReason, inbox: Inbox<Message>) {
        markClosed()
        inbox.finish()
        ended = reason
        var word = wake.load(ordering: .relaxed)
        while true {  // release: `ended` and the last drain, before the turn (C2)
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: Wake.ended), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        scheduleSelf()
    }

    // MARK: the turn

    override func runTurn(budget: Int) -> TurnOutcome {
        var releaseRing = takeReleaseRequest()
        let systemOutcome = drainSystem(releaseRequested: &releaseRing)
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
            if mailboxOutcome == .empty { leaveRegistry() }
        }
        return systemOutcome == .more || mailboxOutcome == .more ? .more : .idle
    }

    /// Why the body ended, if it has. A body that never started counts as ended once the
    /// cell stopped, or at shutdown.
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
                if exchanged { return forShutdown ? .systemShutDown : .stopped }
                word = original
            default:
                return nil
            }
        }
    }

    /// The body ended: run the cell's stop once (ActorLifecycle decides the reason).
    private func finalize(_ ended: TerminationReason) {
        advance(.ended, ended)
    }

    /// The final drain on the caller's thread, unless the body still runs (C1).
    override func finishAfterShutdown() {
        guard let ended = endedReason(forShutdown: true) else { return }
        if isCreated { advance(.shutdown) } else { finalize(ended) }
        let counted = !leftRegistry
        while mailbox.take(max: Int.max, boxed: boxed, { deadLetter($0, wasQueued: counted) }) == .more {
            sched_yield()
        }
        leaveRegistry()
    }

    /// Starts the body's task on the first turn, unless an immediate stop came first (Q5).
    private func startBody() {
        var word = wake.load(ordering: .acquiring)
        var next: UInt64
        while true {
            guard Wake.phase(word) == Wake.notStarted else { return }
            let stopped = word & Wake.cancelRequested != 0 || immediateStop.load(ordering: .acquiring)
            next = stopped ? Wake.endedBeforeStart : Wake.awake
            #if DEBUG
            SequentialStartTestHook.pauseIfArmed(self)
            #endif
            // A failed CAS may be a stop that set cancelRequested: look again (Q5).
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: next), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        guard next == Wake.awake else { return }
        // A throwing operation avoids a reabstraction thunk, and the body's run is this
        // closure, allocated with the task. It captures only the cell.
        let task = Task<Void, any Error>(executorPreference: system.scheduler.taskExecutor) { [self] in
            let inbox = Inbox(cell: self)
            var failure: (any Error)?
            do {
                try await withTaskCancellationHandler {
                    try await body(inbox)
                } onCancel: { [self] in
                    // Only the flag (Q4).
                    wake.bitwiseOr(Wake.taskCancelled, ordering: .releasing)
                }
            } catch {
                failure = error
            }
            bodyDidEnd(terminationReason(after: failure), inbox: inbox)
        }
        bodyTask = task
        let before = wake.bitwiseOr(Wake.taskPublished, ordering: .acquiringAndReleasing).oldValue
        if before & Wake.cancelRequested != 0 { task.cancel() }  // Q5
    }

    // MARK: AnyActorCell hooks

    /// Shutdown and stop: later sends are dead letters; receive returns what is queued,
    /// then throws ActorStoppedError.
    override func closeMailbox() { requestStop(.afterDrainingMailbox, explicit: false) }

    /// Run by finalizeStop. The body has normally ended already; if not, it is stopped.
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
    /// The body runs or is queued to run.
    static let awake: UInt64 = 1
    /// The body waits in `waiter`.
    static let parked: UInt64 = 2
    /// Something happened since the body last looked: its next park looks again.
    static let signalled: UInt64 = 3
    /// The body ended; `ended` holds why. The turn owns the mailbox (C2).
    static let ended: UInt64 = 4
    /// Stopped before the body started: it never will.
    static let endedBeforeStart: UInt64 = 5
    static let taskPublished: UInt64 = 1 << 3
    static let cancelRequested: UInt64 = 1 << 4
    /// The body's task was cancelled (Q4).
    static let taskCancelled: UInt64 = 1 << 5
    /// A walk asked for the ring back: the body's next park gives it back first. The
    /// parking CAS clears it.
    static let releaseRequested: UInt64 = 1 << 6
    static let generationShift: UInt64 = 7

    @inline(__always) static func phase(_ word: UInt64) -> UInt64 { word & phaseMask }
    @inline(__always) static func generation(_ word: UInt64) -> UInt64 { word >> generationShift }
    @inline(__always) static func replacingPhase(of word: UInt64, with phase: UInt64) -> UInt64 {
        (word & ~phaseMask) | phase
    }
    /// `word` (awake) as parked in the next generation, flags kept but `releaseRequested`.
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

    /// Every wait published by a body of `system` runs `action`, until `disarm()`.
    static func arm(_ system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func pauseIfArmed(_ cell: AnyActorCell) { point.fire(for: cell.system) }
}

/// Debug builds only: pauses a sequential actor's next first turn between startBody's look
/// at the wake word and its CAS, so a test can run a stop in that gap (Q5).
enum SequentialStartTestHook {
    private static let armed = Lock<(system: ObjectIdentifier, action: @Sendable (AnyActorCell) -> Void)?>(nil)

    /// The next startBody of a cell of `system` runs `action(cell)`, then disarms.
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
