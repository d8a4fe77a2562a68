// SequentialActorCell: the cell of a thread-style actor, whose behaviour is one async body
// looping on `inbox.receive()`, a task on the scheduler's task executor. An empty receive
// parks the task; the sender that makes the mailbox non-empty resumes it.
//
// The mailbox's single consumer:
//  (C1) while the body runs: its task, through Inbox (the executor orders its jobs).
//  (C2) once the body ended: the cell's turn. The task's last drain happens-before its
//       release CAS to `ended`, which happens-before the turn's acquire load of it.
//
// The wake word (`wake`) holds the body's phase, flags and wait generation; every change
// is an acq_rel RMW, so all fall in one total order.
//  (Q1) The consumer parks only after an empty drain, by CAS awake → parked after storing
//       `waiter`; `signalled` makes it look again.
//  (Q2) The sender that took the mailbox from idle calls `wakeBody`: parked → awake and
//       resume, awake → signalled. Other senders touch no word.
//  (Q3) Whoever CASes out of `parked` resumes `waiter`, exactly once.
//  (Q4) Cancellation only sets `taskCancelled`; a cancelled task does not park.
//  (Q5) startBody's publish of the task and stop's `cancelRequested` are both RMWs, so
//       exactly one sees the other's flag and cancels.
// Why no wake-up is lost, stop and end, costs: <doc:ActorCells>, "Sequential actors".

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
    // @unchecked: mutable state is atomic, ordered by `wake`, turn-confined, or C1/C2.

    typealias Body = @Sendable (Inbox<Message>) async throws -> Void

    // Protocol types live outside this generic class: no generic metadata.
    @usableFromInline typealias WakeReason = SequentialWakeReason
    typealias Wake = SequentialWake

    /// How `Message` travels through `queue`.
    @usableFromInline typealias Encoding = MessageEncoding<Message>
    let body: Body
    /// Written only by the body's task.
    @usableFromInline let delivered = Atomic<Int>(0)
    /// Q1–Q5 (SequentialWake).
    let wake = Atomic<UInt64>(Wake.notStarted)
    /// Written before the CAS to `parked`, read by whoever CASes out of it (Q3).
    @exclusivity(unchecked) var waiter: UnsafeContinuation<WakeReason, Never>?
    /// Stored once before `taskPublished`, read after seeing it.
    @exclusivity(unchecked) var bodyTask: Task<Void, any Error>?
    /// Written before the phase `ended`, read only after it.
    @exclusivity(unchecked) var ended: TerminationReason?
    /// Set (release) by stop(.immediately) before the wake; read (acquire) by receives.
    @usableFromInline let immediateStop = Atomic<Bool>(false)
    /// `stop(_:)` was called (not a shutdown's close).
    let stopRequested = Atomic<Bool>(false)
    /// Shares the flags' word.
    @usableFromInline let boxed = Encoding.isBoxed
    /// Inbox's set-aside count (body writes, shutdown reads).
    let buffered = Atomic<Int>(0)

    init(id: ActorID, name: String?, system: ActorSystem, mailbox: MPSCQueue.Shape, body: @escaping Body) {
        self.body = body
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: mailbox, traits: .stopWord)
    }

    // MARK: MessageRecipient (any thread)

    override var mailboxDepth: Int { queue.approximateCount + buffered.load(ordering: .relaxed) }

    /// Specialised in the sender's module, never inlined.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch Encoding.enqueue(movingFrom: source, into: queue, boxed: boxed) {
        case .accepted(let becameNonEmpty):
            // Q2: wake the body, or get a turn.
            if becameNonEmpty, !wakeBody(.signalled) { scheduleSelf() }
            return true
        case .closed:
            deadLetter(Encoding.take(from: source, boxed: false), wasQueued: false)
            return false
        }
    }

    override func stop(_ mode: StopMode) {
        requestStop(mode, explicit: true)
    }

    /// See ActorCellBase.deadLetter.
    @usableFromInline func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued)
    }

    // MARK: wake-ups (any thread)

    /// Q2. False when no body runs (the caller decides about a turn).
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
    /// throw and cancels the task. Idempotent; any thread.
    func requestStop(_ mode: StopMode, explicit: Bool) {
        queue.markClosed()
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

    /// Suspends until a send, stop or cancellation wakes the body; isolated to the caller.
    @inlinable
    final func park(isolation: isolated (any Actor)?) async -> WakeReason {
        // Resumed once (Q3); the executor-inheriting form saves a hop.
        let reason = await _unsafeInheritExecutor_withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            _ = suspend(continuation)
        }
        threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
        return reason
    }

    /// With an optional deadline, enforced by a timer (Q3).
    nonisolated(nonsending) final func park(deadline: UInt64?) async -> WakeReason {
        var timer: DispatchWorkItem?
        let reason = await withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
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

    /// Q1, consumer side: parks and returns the generation, or resumes at once.
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
                if immediateStop.load(ordering: .acquiring) || queue.isClosed {
                    immediate = .stopped
                } else if word & Wake.taskCancelled != 0 {
                    immediate = .cancelled
                } else {
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

    /// After an empty drain: gives the ring back, then suspends.
    @inline(never)
    private func releaseRingThenSuspend(_ continuation: UnsafeContinuation<WakeReason, Never>) -> UInt64? {
        releaseMailboxRing()
        wake.bitwiseAnd(~Wake.releaseRequested, ordering: .acquiringAndReleasing)
        return suspend(continuation)
    }

    /// Any thread.
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

    /// The task's last act: hands the mailbox to the turn (C2).
    @inline(never)
    func bodyDidEnd(_ reason: TerminationReason, inbox: Inbox<Message>) {
        queue.markClosed()
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

    override func runTurn(budget: Int, lingering: LingerPermit) -> TurnOutcome {
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
            mailboxOutcome = Encoding.drain(queue, max: budget, boxed: boxed) { deadLetter($0, wasQueued: counted) }
            if mailboxOutcome == .empty { leaveRegistry() }
        }
        return systemOutcome == .more || mailboxOutcome == .more ? .more : .idle
    }

    /// An unstarted body ends once stopped or at shutdown.
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

    /// Runs the cell's stop once.
    private func finalize(_ ended: TerminationReason) {
        advance(.ended, ended)
    }

    /// Unless the body still runs (C1).
    override func finishAfterShutdown() {
        guard let ended = endedReason(forShutdown: true) else { return }
        if isCreated { advance(.shutdown) } else { finalize(ended) }
        let counted = !leftRegistry
        while Encoding.drain(queue, max: Int.max, boxed: boxed, { deadLetter($0, wasQueued: counted) }) == .more {
            sched_yield()
        }
        leaveRegistry()
    }

    /// Unless an immediate stop came first (Q5).
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
            // A failed CAS may be a stop: look again (Q5).
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: next), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        guard next == Wake.awake else { return }
        // Throwing avoids a reabstraction thunk; the closure captures the cell.
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

    /// Receive returns what is queued, then throws.
    override func closeMailbox() { requestStop(.afterDrainingMailbox, explicit: false) }

    /// Stops a body that has not ended yet.
    override func stopInstance() { requestStop(.immediately, explicit: false) }

    override var heldOutsideQueue: Int { buffered.load(ordering: .relaxed) }
    override func stopImmediately() { stop(.immediately) }
}

/// Why a parked receive was resumed.
@usableFromInline
enum SequentialWakeReason: Sendable { case signalled, stopped, timedOut, cancelled }

/// The `wake` word: bits 0–2 phase, 3 `taskPublished`, 4 `cancelRequested`, 5
/// `taskCancelled`, 6 `releaseRequested`, 7–63 the current (or last) wait's generation.
enum SequentialWake {
    static let phaseMask: UInt64 = 0b111
    static let notStarted: UInt64 = 0
    /// Running or queued to run.
    static let awake: UInt64 = 1
    /// Waiting in `waiter`.
    static let parked: UInt64 = 2
    /// The next park looks again.
    static let signalled: UInt64 = 3
    /// `ended` holds why; the turn owns the mailbox (C2).
    static let ended: UInt64 = 4
    /// Stopped before the body started.
    static let endedBeforeStart: UInt64 = 5
    static let taskPublished: UInt64 = 1 << 3
    static let cancelRequested: UInt64 = 1 << 4
    /// Q4.
    static let taskCancelled: UInt64 = 1 << 5
    /// The next park gives the ring back; its CAS clears this.
    static let releaseRequested: UInt64 = 1 << 6
    static let generationShift: UInt64 = 7

    @inline(__always) static func phase(_ word: UInt64) -> UInt64 { word & phaseMask }
    @inline(__always) static func generation(_ word: UInt64) -> UInt64 { word >> generationShift }
    @inline(__always) static func replacingPhase(of word: UInt64, with phase: UInt64) -> UInt64 {
        (word & ~phaseMask) | phase
    }
    /// `word` parked in the next generation, flags kept except `releaseRequested`.
    @inline(__always) static func parking(_ word: UInt64) -> UInt64 {
        let flags = word & (taskPublished | cancelRequested | taskCancelled)
        return ((generation(word) &+ 1) << generationShift) | flags | parked
    }
}

#if DEBUG
/// Debug builds only: runs an action after a body's wait is published, before its
/// `await`, until disarmed.
enum SequentialSuspendTestHook {
    private static let point = SystemHookPoint()

    static func arm(_ system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func pauseIfArmed(_ cell: AnyActorCell) { point.fire(for: cell.system) }
}

/// Debug builds only: pauses the next startBody between its look at `wake` and its CAS (Q5).
enum SequentialStartTestHook {
    private static let armed = Lock<(system: ObjectIdentifier, action: @Sendable (AnyActorCell) -> Void)?>(nil)

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
