// SequentialActorCell — the cell of a thread-style actor (Haller & Odersky's "receive"
// half): the behaviour is one async body that loops on `inbox.receive()`. The body runs as
// a Swift task with the scheduler's MNTaskExecutor as its executor preference, so it
// occupies a worker only while it computes; a receive with nothing to take suspends the
// task (a continuation, no thread), and the sender that makes the mailbox non-empty
// resumes it.
//
// ## Who consumes the mailbox (the MPSCQueue's single consumer)
//   (C1) while the body runs (`control.body == .running`): the body's task, through Inbox.
//        Successive jobs of one task are ordered by the executor, so the task is one
//        consumer even when it hops between workers.
//   (C2) once the body ended (`.ended`), or if the cell stopped before it started: the
//        cell's turn, which dead-letters whatever is left. The hand-over happens under
//        `control`'s lock: the task's last drain happens-before its `.ended` store, which
//        happens-before the turn's read of it.
//
// ## Wake-up protocol (no lost wake-up)
// The task (consumer) takes one message at a time with `mailbox.drain(max: 1)`:
//   got one       → return it (selective receive: buffer it in the Inbox and go on);
//   .more, none   → a producer is between claim and commit: Task.yield() and retry;
//   .empty        → the mailbox went idle (MPSCQueue's idle flag), so the next enqueue
//                   is the idle→busy one and reports `becameNonEmpty`. Now park:
//                   under `control`'s lock, if `signalled` is set, clear it and retry;
//                   if the actor is stopping or the task is cancelled, don't park; else
//                   store the continuation as `waiter` (with a fresh generation number).
// A sender whose enqueue reported `becameNonEmpty` takes the same lock: if a `waiter` is
// stored it removes and resumes it; otherwise it sets `signalled`. The two critical
// sections are ordered one way or the other: sender first → the consumer sees `signalled`
// and does not park; consumer first → the sender finds the waiter. Every enqueue after the
// consumer observed empty is either that idle→busy sender or lands behind it, so a parked
// consumer always has a resumer. A stale `signalled` (set while the consumer was running)
// costs one extra, empty drain. Senders that do not take the mailbox from idle take no
// lock: the hot path stays an ordinary send (Guarantees, "Lock-free on the common path").
// Other resumers, all under the same lock and only if the waiter is still there:
// stop/close (→ .stopped), the timeout timer (→ .timedOut, only if the generation still
// matches, so a stale timer never resumes a later wait). Cancellation: the body's task is
// cancelled only by requestStop, which resumes a parked receive itself (→ .stopped); a
// task already cancelled does not park (→ .cancelled), so park registers no handler.
// Each continuation is therefore resumed exactly once: whoever removes it resumes it.
//
// ## Stop and end
//   stop(.immediately): closes the mailbox, sets `immediateStop` (receive throws
//     ActorStoppedError at once), resumes a parked receive, cancels the body's task.
//   stop(.afterDrainingMailbox), shutdown's closeMailbox(): closes the mailbox and resumes
//     a parked receive; receive keeps returning what is buffered or queued, then throws
//     ActorStoppedError (and `for await` ends).
//   The body's end (return, throw, or stop): the task closes the mailbox, dead-letters the
//     Inbox's buffered messages, stores `.ended(reason)` and schedules the cell; that turn
//     runs AnyActorCell.finalizeStop (watchers get `.terminated`) and dead-letters what is
//     left in the mailbox (C2); the cell leaves the registry only once that drain reported
//     empty, so shutdown never stops the scheduler under messages not yet accounted for.
//     So `.terminated` means the body will run no more code, and
//     delivered + dead-lettered + left = sent holds.
//   After the scheduler shut down (runAfterShutdown): a body that ended, or never started,
//     gets the same final drain on the caller's thread; a body still running keeps the
//     mailbox (C1) until it ends, and its bodyDidEnd schedules the final drain then.
// Accounting: `delivered` is written only by the consumer task (relaxed load+store, one
// writer); `buffered` (messages the Inbox set aside) is written only by it too, and is read
// by shutdown to count what is left.

import Dispatch
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

@usableFromInline
final class SequentialActorCell<Message: Sendable>: AnyActorCell, MessageRecipient, @unchecked Sendable {
    // @unchecked: mutable state is either under `control`'s lock, atomic, turn-confined
    // (AnyActorCell C2), or the MPSCQueue's consumer side (see C1/C2 above).

    typealias Body = @Sendable (Inbox<Message>) async throws -> Void

    // The protocol's types live outside this generic class (below): nested in it, every
    // use instantiated generic metadata (swift_getGenericMetadata was ~60 % of a sequential
    // ping-pong message's instructions).
    typealias WakeReason = SequentialWakeReason
    typealias BodyState = SequentialBodyState
    typealias WakeDuty = SequentialWakeDuty
    typealias ParkAttempt = SequentialParkAttempt
    typealias Waiter = SequentialWaiter
    typealias Control = SequentialControl

    /// True when `Message` travels boxed (see MessageEncoding), computed once.
    let boxed = MessageEncoding<Message>.isBoxed
    /// Moves a message out of a mailbox item.
    @inline(__always) final func take(_ item: UnsafeMutableRawPointer) -> Message {
        MessageEncoding<Message>.take(from: item, boxed: boxed)
    }
    /// The user mailbox (messages in ring slots, see MessageEncoding).
    let mailbox: MPSCQueue
    let body: Body
    let control = Lock<Control>(Control())
    /// Set (release) by stop(.immediately) before it resumes the waiter; read (acquire) by
    /// every receive.
    let immediateStop = Atomic<Bool>(false)
    /// Messages the Inbox set aside (selective receive). Written by the consumer task only.
    let buffered = Atomic<Int>(0)

    init(id: ActorID, name: String, system: ActorSystem, mailbox: MPSCQueue, body: @escaping Body) {
        self.mailbox = mailbox
        self.body = body
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor)
    }

    deinit {
        // Release payloads of messages nobody will process (e.g. left at shutdown).
        MessageEncoding<Message>.discardAll(in: mailbox)
    }

    // MARK: MessageRecipient (any thread)

    var watchableCell: AnyActorCell? { self }
    var mailboxDepth: Int { mailbox.approximateCount + buffered.load(ordering: .relaxed) }

    @discardableResult
    @usableFromInline func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch MessageEncoding<Message>.enqueue(movingFrom: source, into: mailbox, boxed: boxed) {
        case .accepted(let becameNonEmpty):
            if becameNonEmpty { wakeConsumer() }
            return true
        case .closed:
            deadLetter(MessageEncoding<Message>.take(from: source, boxed: false), wasQueued: false)
            return false
        }
    }

    func stop(_ mode: StopMode) {
        requestStop(mode, explicit: true)
    }

    /// A message of this actor's that will not be handled (see ActorSystem.publishDeadLetter).
    /// The turn's drains pass `wasQueued: !leftRegistry`: after the cell left the registry
    /// a late arrival counts as sent when dead-lettered (see ActorCellBase.deadLetter).
    func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued)
    }

    // MARK: wake-ups (any thread)

    /// The idle→busy sender's duty: resume the parked body, or leave `signalled`, or (no body
    /// running) get a turn to start it or dead-letter.
    private func wakeConsumer() {
        let duty: WakeDuty = control.withLock { control in
            guard case .running = control.body else { return .turn }
            if let waiter = control.waiter {
                control.waiter = nil
                return .resume(waiter)
            }
            control.signalled = true
            return .none
        }
        switch duty {
        case .resume(let waiter): waiter.continuation.resume(returning: .signalled)
        case .turn: scheduleSelf()
        case .none: break
        }
    }

    /// Closes the mailbox and wakes a parked receive; `.immediately` also makes every
    /// receive throw and cancels the body's task. Idempotent; any thread.
    func requestStop(_ mode: StopMode, explicit: Bool) {
        mailbox.markClosed()
        if mode == .immediately { immediateStop.store(true, ordering: .releasing) }
        let (waiter, task): (Waiter?, Task<Void, Never>?) = control.withLock { control in
            if explicit { control.stopRequested = true }
            let waiter = control.waiter
            control.waiter = nil
            if mode == .immediately, case .running(let task) = control.body { return (waiter, task) }
            return (waiter, nil)
        }
        waiter?.continuation.resume(returning: .stopped)
        task?.cancel()  // outside the lock: cancellation handlers take it
    }

    // MARK: consumer side (the body's task only, C1)

    /// Takes at most one message from the mailbox.
    func takeOne() -> (Message?, MPSCQueue.DrainOutcome) {
        var taken: Message?
        let outcome = mailbox.drain(max: 1, taking: take) { taken = $0 }
        return (taken, outcome)
    }

    /// Counts one message handed to the body.
    func countDelivered() {
        delivered.store(delivered.load(ordering: .relaxed) + 1, ordering: .relaxed)
    }

    /// Suspends the body until a sender, a stop, the deadline (uptime nanoseconds) or a
    /// cancellation wakes it. Returns at once if one of them already happened.
    nonisolated(nonsending) func park(deadline: UInt64?) async -> WakeReason {
        // No cancellation handler: the body's task is cancelled only by requestStop, which
        // resumes a parked receive itself (under `control`'s lock, see the file comment), so
        // registering one on every park (a status-record lock in the runtime, about 1,000
        // instructions) would buy nothing. An unsafe continuation: each is resumed exactly
        // once, by whoever removes it from `control.waiter`.
        var timer: DispatchWorkItem?
        let reason = await withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            let attempt: ParkAttempt = control.withLock { control in
                if control.signalled {
                    control.signalled = false
                    return .immediate(.signalled)
                }
                if immediateStop.load(ordering: .acquiring) || mailbox.isClosed { return .immediate(.stopped) }
                if Task.isCancelled { return .immediate(.cancelled) }
                control.generation &+= 1
                control.waiter = Waiter(continuation: continuation, generation: control.generation)
                return .parked(generation: control.generation)
            }
            switch attempt {
            case .immediate(let reason):
                continuation.resume(returning: reason)
            case .parked(let generation):
                // A deadline centuries away (a huge timeout, saturated) needs no timer.
                if let deadline, deadline < DispatchTime.now().uptimeNanoseconds &+ UInt64(Int64.max) / 1_000 {
                    let item = DispatchWorkItem { [weak self] in self?.expireWaiter(generation: generation) }
                    timer = item
                    DispatchQueue.global().asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline), execute: item)
                }
            }
        }
        timer?.cancel()
        return reason
    }

    private func expireWaiter(generation: UInt64) {
        let waiter: Waiter? = control.withLock { control in
            guard let waiter = control.waiter, waiter.generation == generation else { return nil }
            control.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: .timedOut)
    }

    /// Why the body ended, given how (`error` nil: it returned).
    func terminationReason(after error: (any Error)?) -> TerminationReason {
        let stopRequested = control.withLock { $0.stopRequested }
        switch error {
        case nil:
            return stopRequested ? .stopped : .finished
        case is ActorStoppedError, is CancellationError:
            return stopRequested || !system.isShuttingDown ? .stopped : .systemShutDown
        case let error?:
            return .failed(String(describing: error))
        }
    }

    /// The task's last act: hands the mailbox to the turn (C2), which finalizes the stop.
    func bodyDidEnd(_ reason: TerminationReason) {
        mailbox.markClosed()
        control.withLock { control in
            control.body = .ended(reason)
            control.waiter = nil
            control.signalled = false
        }
        scheduleSelf()
    }

    // MARK: the turn (system messages, start, final stop, dead letters)

    override func runTurn(budget: Int) -> TurnOutcome {
        let systemOutcome = drainSystem()
        if isCreated {
            phase = .running
            startBody()
        }
        var mailboxOutcome = MPSCQueue.DrainOutcome.empty
        if let ended = endedReason() {
            finalize(ended)
            let counted = !leftRegistry
            mailboxOutcome = mailbox.drain(max: budget, taking: take) { deadLetter($0, wasQueued: counted) }
            if mailboxOutcome == .empty { leaveRegistry() }  // every message accounted for
        }
        return systemOutcome == .more || mailboxOutcome == .more ? .more : .idle
    }

    /// Why the body ended, if it has (a body that never started counts as ended once the
    /// cell stopped, or when `forShutdown`).
    private func endedReason(forShutdown: Bool = false) -> TerminationReason? {
        control.withLock { control in
            switch control.body {
            case .ended(let reason):
                return reason
            case .notStarted where isStopped || forShutdown:
                control.body = .ended(.stopped)  // stopped before the body started
                return forShutdown ? .systemShutDown : .stopped
            default:
                return nil
            }
        }
    }

    /// The body ended: run the cell's stop (watchers, parent) once.
    private func finalize(_ ended: TerminationReason) {
        guard !isStopped else { return }
        if case .draining(let drainReason) = phase, !ended.isFailure {
            finalizeStop(drainReason)
        } else {
            finalizeStop(ended)
        }
    }

    /// After the scheduler shut down (see the file comment): the final drain, on the
    /// caller's thread, unless the body still runs and so still owns the mailbox.
    override func finishAfterShutdown() {
        guard let ended = endedReason(forShutdown: true) else { return }
        finalize(ended)
        let counted = !leftRegistry
        while mailbox.drain(max: Int.max, taking: take, { deadLetter($0, wasQueued: counted) }) == .more {
            sched_yield()
        }  // a sender between claim and commit: a few instructions
        leaveRegistry()
    }

    /// Starts the body's task (first turn), unless an immediate stop came first.
    private func startBody() {
        let taskExecutor = system.scheduler.taskExecutor
        control.withLock { control in
            guard case .notStarted = control.body else { return }
            if immediateStop.load(ordering: .acquiring) {
                control.body = .ended(.stopped)
                return
            }
            let body = self.body
            let task = Task(executorPreference: taskExecutor) { [self] in
                let inbox = Inbox(cell: self)
                var failure: (any Error)?
                do { try await body(inbox) } catch { failure = error }
                let reason = terminationReason(after: failure)
                mailbox.markClosed()
                inbox.finish()
                bodyDidEnd(reason)
            }
            control.body = .running(task)
        }
    }

    // MARK: AnyActorCell hooks

    /// Shutdown (any thread) and stop handling: later sends go to dead letters; a receive
    /// returns what is queued, then throws ActorStoppedError.
    override func closeMailbox() { requestStop(.afterDrainingMailbox, explicit: false) }

    /// Run by finalizeStop. Normally the body has already ended; if a `.stop(.immediately)`
    /// system message ever finalizes the cell first, the body is stopped as well.
    override func stopInstance() { requestStop(.immediately, explicit: false) }

    override var userMailboxDepth: Int { mailboxDepth }
    override var userQueue: MPSCQueue? { mailbox }
}

/// Why a parked receive was resumed.
enum SequentialWakeReason: Sendable { case signalled, stopped, timedOut, cancelled }

enum SequentialBodyState {
    case notStarted
    case running(Task<Void, Never>)
    case ended(TerminationReason)
}

/// What an idle→busy sender must do (decided under the lock, done outside it).
enum SequentialWakeDuty { case resume(SequentialWaiter), none, turn }

/// What a park attempt did.
enum SequentialParkAttempt { case parked(generation: UInt64), immediate(SequentialWakeReason) }

struct SequentialWaiter {
    let continuation: UnsafeContinuation<SequentialWakeReason, Never>
    let generation: UInt64
}

/// Shared between senders, the consumer task, stop() and timers (see the file comment).
struct SequentialControl {
    var body: SequentialBodyState = .notStarted
    var waiter: SequentialWaiter?
    var signalled = false
    var generation: UInt64 = 0
    /// `stop(_:)` was called (as opposed to a close by shutdown).
    var stopRequested = false
}

extension TerminationReason {
    var isFailure: Bool {
        if case .failed = self { return true }
        return false
    }
}
