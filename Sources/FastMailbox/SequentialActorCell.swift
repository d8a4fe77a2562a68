// SequentialActorCell — the cell of a thread-style actor (Haller & Odersky's "receive"
// half): the behaviour is one async body that loops on `inbox.receive()`. The body runs as
// a Swift task with the scheduler's MNTaskExecutor as its executor preference, so it
// occupies a worker only while it computes; a receive with nothing to take suspends the
// task (a continuation, no thread), and the sender that makes the mailbox non-empty
// resumes it.
//
// ## Who consumes the mailbox (the MPSCQueue's single consumer)
//   (C1) while the body runs (phase awake, parked or signalled): the body's task, through
//        Inbox. Successive jobs of one task are ordered by the executor, so the task is one
//        consumer even when it hops between workers.
//   (C2) once the body ended (phase `ended`), or if the cell stopped before it started
//        (`endedBeforeStart`): the cell's turn, which dead-letters whatever is left. The
//        hand-over is the `wake` word: the task's last drain happens-before its release CAS
//        to `ended`, which happens-before the turn's acquire load that sees it.
//
// ## Wake-up protocol (no lost wake-up, no lock)
// One atomic word, `wake` (SequentialWake), holds the body's phase — notStarted, awake,
// parked, signalled, ended, endedBeforeStart — plus two flags (the task handle published,
// a cancel requested) and the generation of the current wait. Every change of phase is a
// read-modify-write of that word, so all of them fall in one total order.
// The task (consumer) takes one message at a time with `mailbox.takeOne()` (a drain of at
// most one, specialised in the body's module: Inbox.receiveStep):
//   got one       → return it (selective receive: buffer it in the Inbox and go on);
//   .more, none   → a producer is between claim and commit: Task.yield() and retry;
//   .empty        → the mailbox went idle (MPSCQueue's idle flag), so the next enqueue
//                   is the idle→busy one and reports `becameNonEmpty`. Now park
//                   (`suspend`, inside withUnsafeContinuation): store the continuation in
//                   `waiter`, then, if the phase is `signalled`, CAS it to `awake` and look
//                   again; if the actor is stopping or the task is cancelled, don't park;
//                   else CAS `awake` → `parked` with the next generation (acquire-release:
//                   it publishes `waiter`).
// A sender whose enqueue reported `becameNonEmpty` calls `wakeBody`: `parked` → CAS to
// `awake`, then it resumes `waiter`; `awake` → CAS to `signalled`; `signalled` → a CAS
// that changes nothing (its release still orders the sender's enqueue before the
// consumer's next acquire of the word); notStarted/ended → the cell's turn starts the body
// or dead-letters. The two CASes are ordered one way or the other: sender first → the
// consumer's CAS fails, it sees `signalled` (acquire: the enqueue is visible) and does
// not park; consumer first → the sender finds `parked` (acquire: `waiter` is visible).
// Every enqueue after the consumer observed empty is either that idle→busy sender or lands
// behind it, so a parked consumer always has a resumer. A stale `signalled` (set while the
// consumer was running) costs one extra, empty drain. Senders that do not take the mailbox
// from idle touch no word: the hot path stays an ordinary send (Guarantees, "Lock-free on
// the common path").
// Other resumers go through the same word: stop/close call `wakeBody` after closing the
// mailbox (so a consumer about to park sees `signalled`, then the closed mailbox); the
// timeout timer CASes `parked` → `awake` only if the generation still matches, so a stale
// timer never resumes a later wait. Whoever wins the CAS out of `parked` resumes `waiter`,
// so each continuation is resumed exactly once; the consumer does not touch `waiter` again
// until it runs after that resume. Cancellation: the body's task is cancelled only by
// requestStop, which wakes a parked receive itself, or by the body itself (while it runs,
// so never while it is parked). A task already cancelled does not park (→ .cancelled); the
// check reads `taskCancelled` from the word it loaded anyway, set by the one cancellation
// handler the body's task registers for the body's whole life, not one per park (each registration
// is a status-record lock). The handler may run with the task's status-record lock held,
// so it only ORs the flag in: resuming the task from there would take that lock again.
// The task handle: startBody CASes notStarted → awake before it creates the task, stores
// the handle, then sets `taskPublished`; stop(.immediately) sets `cancelRequested`. Both
// are RMWs of the word, so exactly one of them sees the other's flag and cancels the task.
// A stop that sets `cancelRequested` between startBody's load and its CAS makes the CAS
// fail: startBody looks again at the word that CAS returned (an acquire load, so the
// stop's earlier writes are visible), sees the flag and CASes to endedBeforeStart
// instead, so the same turn ends the cell (the stop schedules nothing for a body that
// has not started: it relies on that first turn).
//
// ## Giving the ring back (ActorSystem+Reclaim)
// The mailbox is reclaimable, as an event actor's: a parked body that once got a message
// would otherwise keep its ring (~460 bytes at 32 slots) for as long as it waits. A walk
// that finds the ring idle since its previous look asks the cell (the request word or
// message, AnyActorCell.requestMailboxRelease); the cell's turn takes the request and ORs
// `releaseRequested` into `wake` (requestRingRelease): `parked` → `awake` with the flag,
// then it resumes `waiter` (.signalled: the receive looks again) — the same CAS out of
// `parked` as any resumer's, so the continuation is still resumed once; `awake` or
// `signalled` → the flag only. Only the consumer gives the ring back (MPSCQueue, "Giving
// the ring back"): `suspend`, about to park after its drain found the mailbox empty, sees
// the flag in the word it loaded, calls MPSCQueue.releaseIdleRing, clears the flag and
// parks as usual (the parking CAS would drop a flag set again meanwhile). A sender that claimed meanwhile makes the release give
// up (its message is delivered) and, having taken the mailbox from idle, signals the body
// as any sender does; a send after the release installs a fresh ring. Nothing per message
// but one test of a bit `suspend` already loaded.
//
// ## Stop and end
//   stop(.immediately): closes the mailbox, sets `immediateStop` (receive throws
//     ActorStoppedError at once), wakes the body (a parked receive is resumed), and
//     cancels the body's task (the taskPublished/cancelRequested handshake above).
//   stop(.afterDrainingMailbox), shutdown's closeMailbox(): closes the mailbox and resumes
//     a parked receive; receive keeps returning what is buffered or queued, then throws
//     ActorStoppedError (and `for await` ends).
//   The body's end (return, throw, or stop): the task closes the mailbox, dead-letters the
//     Inbox's buffered messages, stores the reason and then the phase `ended` (release),
//     and schedules the cell; that turn runs AnyActorCell.finalizeStop (watchers get
//     `.terminated`) and dead-letters what is
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
//
// ## Specialised receive
// This generic class's code is compiled once, unspecialised, so a message taken here paid
// metadata look-ups for `Optional<Message>` and value-witness calls; and every async call
// between the body and the continuation cost a task-allocator frame and an executor check.
// The receive path is therefore @inlinable (Inbox.receive(), the iterator's next,
// takeOne, park): it is specialised in the body's module, and the one real suspension is
// the continuation. What it calls out of line (suspend, wakeBody, errors) is not generic
// over `Message`. Each swift_task_switch costs a status-record lock here (the task has an
// executor preference), so the path keeps to one per wait: the continuation is created
// without a hop (the executor-inheriting form), and the hop after it names the same
// executor value as the body's own hops (Inbox.receive(isolation:) for `for await`), which
// lets the optimizer drop those as redundant.
//
// ## Cost floor (measured, Swift 6.3.1, x86_64)
// What is left per ping-pong message is mostly the Swift runtime's, not this file's:
// callgrind (instruction-probe sequential, MN_WORKERS=1) put 2,319 instructions per
// message (today's count: Benchmarks/results/instructions.md) at ~1,540 in
// libswift_Concurrency, libc and ld.so (the continuation's await and resume, its
// TaskDependencyStatusRecord added, updated and removed, and the task executor preference
// looked up by swift_task_enqueue and swift_task_switch: five status-record lock round
// trips, a pthread mutex each) against ~780 in this package.
// Memory: a sequential actor parked in receive after one message is 2,123 heap bytes
// (instruction-probe seqspawn 100000, mallinfo, chunk headers included; valgrind dhat for
// who allocates what): the task's first allocator slab 1,016 B and the task object 304 B
// (the runtime's: the slab size is fixed at 1,024 − header; the task's first use is its
// executor-preference record, at creation), the ring 464 B (until a walk takes it
// back: "Giving the ring back", then ~1,640 B), the cell with its mailbox queue inside
// (MPSCQueue, "One object"), the Inbox 40 B, the body's closure context (the caller's), a
// registry slot. The frames of the
// task's closure, withTaskCancellationHandler and its operation take ~480 B of the slab,
// the executor-preference record included; a body whose own frames (its closure and what
// it awaits, nested) need more than the ~500 B left gets a second slab, +1,016 B (debug
// builds' frames do). The handler's ~270 B could go if suspend asked the runtime whether
// the task is cancelled instead of reading `taskCancelled`: measured +100 instructions per
// ping-pong message, so it stays. Going much below ~1,330 B per actor needs bodies that
// are not one task each.

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
    // @unchecked: mutable state is atomic, ordered by `wake` (waiter, bodyTask, ended),
    // turn-confined (AnyActorCell C2), or the MPSCQueue's consumer side (see C1/C2 above).

    typealias Body = @Sendable (Inbox<Message>) async throws -> Void

    // The protocol's types live outside this generic class (below): nested in it, every
    // use instantiated generic metadata (swift_getGenericMetadata was ~60 % of a sequential
    // ping-pong message's instructions).
    @usableFromInline typealias WakeReason = SequentialWakeReason
    typealias Wake = SequentialWake

    /// The user mailbox, every typed operation on it one of Mailbox's (messages in ring
    /// slots, see MessageEncoding). Its queue is the cell itself (MPSCQueue, "One object");
    /// messages still inside when the cell goes (left at a shutdown) are released by the
    /// queue's deinit, the cell's last. Untyped operations are called on the cell itself
    /// (as in ActorCellBase: no Mailbox formed, no retain of the cell).
    @inlinable final var mailbox: Mailbox<Message> { @inline(__always) get { Mailbox(queue: self) } }
    let body: Body
    /// Messages handed to the body so far (written only by the body's task, C1; see
    /// "Accounting" in the file comment).
    @usableFromInline let delivered = Atomic<Int>(0)
    /// The wake-up word (see the file comment and SequentialWake).
    let wake = Atomic<UInt64>(Wake.notStarted)
    /// The parked receive's continuation: written by the consumer before its CAS to
    /// `parked`, read by whoever CASes `parked` → `awake` (see the file comment).
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
    /// True when `Message` travels boxed (see MessageEncoding), computed once. Beside the
    /// two flags above, not first: alone it took a padded word (the cell 8 bytes larger,
    /// one 16-byte malloc step more per actor).
    @usableFromInline let boxed = Mailbox<Message>.isBoxed
    /// Messages the Inbox set aside (selective receive). Written by the consumer task only.
    let buffered = Atomic<Int>(0)

    /// `mailbox`: the validated shape of the cell's own mailbox queue (ActorSystem.mailboxShape).
    init(id: ActorID, name: String?, system: ActorSystem, mailbox: MPSCQueue.Shape, body: @escaping Body) {
        self.body = body
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: mailbox, traits: .stopWord)
    }

    // MARK: MessageRecipient (any thread)

    override var mailboxDepth: Int { approximateCount + buffered.load(ordering: .relaxed) }

    /// Inlinable (and never inlined), so specialised for `Message` in the module that sends
    /// it, as ActorCellBase.deliver(movingFrom:) is: unspecialised, the enqueue's move of the
    /// message looked up `Message`'s metadata and witnesses on every send.
    @discardableResult
    @inlinable @inline(never)
    final func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        switch mailbox.enqueue(movingFrom: source, boxed: boxed) {
        case .accepted(let becameNonEmpty):
            // The idle→busy sender's duty: wake the body, or (none running) get a turn to
            // start it or dead-letter.
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

    /// A message of this actor's that will not be handled (see ActorSystem.publishDeadLetter).
    /// The turn's drains pass `wasQueued: !leftRegistry`: after the cell left the registry
    /// a late arrival counts as sent when dead-lettered (see ActorCellBase.deadLetter).
    @usableFromInline func deadLetter(_ message: Message, wasQueued: Bool = true) {
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: wasQueued)
    }

    // MARK: wake-ups (any thread)

    /// Wakes the body (see "Wake-up protocol"): resumes a parked receive with `reason`, or
    /// leaves `signalled`. False when no body runs (not started, or ended): then the caller
    /// decides whether the cell needs a turn. Lock-free: a CAS loop on `wake`.
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
    /// if one of them already happened. Isolated to the caller's `isolation` value and
    /// inlinable: the continuation is the receive's only suspension, and the hop back after
    /// it names the same executor value as the caller's own hops, so the optimizer drops
    /// theirs (see "Specialised receive"; Inbox.receive() makes its continuation inline).
    @inlinable
    final func park(isolation: isolated (any Actor)?) async -> WakeReason {
        // An unsafe continuation: each is resumed exactly once, by whoever takes it out of
        // `parked` (see the file comment). The executor-inheriting form: this function
        // already runs where the continuation must be created, and
        // withUnsafeContinuation(isolation:)'s hop before it would be one more
        // swift_task_switch (a status-record lock with a task executor preference) per wait.
        let reason = await _unsafeInheritExecutor_withUnsafeContinuation { (continuation: UnsafeContinuation<WakeReason, Never>) in
            _ = suspend(continuation)
        }
        threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
        return reason
    }

    /// Waits like `park(isolation:)`, and with a deadline (uptime nanoseconds) a timer
    /// resumes the wait with `.timedOut` unless something else resumed it first. The
    /// general receive's wait (Inbox.receive(timeout:where:)).
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

    /// The consumer's half of the wake-up protocol, inside withUnsafeContinuation: parks
    /// (returns the wait's generation) or resumes `continuation` at once (returns nil).
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
                    // A walk asked for the ring back (see "Giving the ring back"): out of line,
                    // so this path keeps its registers.
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

    /// Gives the mailbox's ring back (AnyActorCell.releaseMailboxRing): the body's task only
    /// (the consumer, C1), right after a drain that found the mailbox empty (suspend). A
    /// producer that claimed meanwhile makes it give up; its message is delivered as usual.
    /// Then clears `releaseRequested` (an RMW: other bits may change meanwhile) and
    /// suspends as usual. No drain ran since the caller's, so suspend's look at the word
    /// still follows an empty drain.
    @inline(never)
    private func releaseRingThenSuspend(_ continuation: UnsafeContinuation<WakeReason, Never>) -> UInt64? {
        releaseMailboxRing()
        wake.bitwiseAnd(~Wake.releaseRequested, ordering: .acquiringAndReleasing)
        return suspend(continuation)
    }

    /// A walk asked for the ring back (the turn; see "Giving the ring back"): sets
    /// `releaseRequested` for the body's next park, and wakes a parked body so that it looks
    /// again, finds the mailbox empty and parks once more, giving the ring back first. A
    /// body not running (not started, ended) has no ring to give: nothing. Any thread.
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

    /// The task's last act (out of line: it adds nothing to the task's initial context):
    /// dead-letters what the Inbox set aside and hands the mailbox to the turn (C2), which
    /// finalizes the stop.
    @inline(never)
    func bodyDidEnd(_ reason: TerminationReason, inbox: Inbox<Message>) {
        markClosed()
        inbox.finish()
        ended = reason
        var word = wake.load(ordering: .relaxed)
        while true {  // release: `ended` and the task's last drain before the turn's
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: Wake.ended), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        scheduleSelf()
    }

    // MARK: the turn (system messages, start, final stop, dead letters)

    override func runTurn(budget: Int) -> TurnOutcome {
        var releaseRing = takeReleaseRequest()  // ActorSystem+Reclaim: a walk asked (the word…
        let systemOutcome = drainSystem(releaseRequested: &releaseRing)  // …or a message)
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

    /// After the scheduler shut down (see the file comment): the final drain, on the
    /// caller's thread, unless the body still runs and so still owns the mailbox.
    override func finishAfterShutdown() {
        guard let ended = endedReason(forShutdown: true) else { return }
        if isCreated { advance(.shutdown) } else { finalize(ended) }  // created: it never started
        let counted = !leftRegistry
        while mailbox.take(max: Int.max, boxed: boxed, { deadLetter($0, wasQueued: counted) }) == .more {
            sched_yield()
        }  // a sender between claim and commit: a few instructions
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
            // A failed CAS is a stop that set cancelRequested meanwhile: look again (giving
            // up here left the phase notStarted, with no task and no turn to end the cell).
            let (exchanged, original) = wake.compareExchange(
                expected: word, desired: Wake.replacingPhase(of: word, with: next), ordering: .acquiringAndReleasing)
            if exchanged { break }
            word = original
        }
        guard next == Wake.awake else { return }
        // The task's frames live in its allocator's first 1,000-byte slab (the runtime's
        // fixed size); a body whose frames do not fit gets a second slab (+1,016 heap bytes
        // for as long as it lives). So this side keeps its share of the slab small:
        //  - a throwing operation: the non-throwing Task init wraps it in a reabstraction
        //    thunk (two more frames, and a 32-byte heap context per actor);
        //  - the body's whole run is this closure, not a call to a method: its frame is the
        //    task's initial context, allocated with the task object, not in the slab.
        // The closure captures only the cell (it reads `body` from it).
        let task = Task<Void, any Error>(executorPreference: system.scheduler.taskExecutor) { [self] in
            let inbox = Inbox(cell: self)
            var failure: (any Error)?
            do {
                try await withTaskCancellationHandler {
                    try await body(inbox)
                } onCancel: { [self] in
                    // Only the flag (see "Wake-up protocol": the status-record lock may be held).
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
/// `releaseRequested`, bits 7–63 the generation of the current (or last) wait. See the cell's file comment for who changes what.
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
/// Debug builds only: runs an action on the body's thread right after its wait is published
/// (the wake word says parked, a sender may resume the continuation) and before the body
/// reaches its `await`, so a test can resume the wait early (park(isolation:)'s ThreadSanitizer
/// acquire). Stays armed until disarmed.
enum SequentialSuspendTestHook {
    private static let point = SystemHookPoint()

    /// Every wait published by a body of `system` runs `action` there, until `disarm()`.
    static func arm(_ system: ActorSystem, _ action: @escaping @Sendable () -> Void) { point.arm(system, action) }

    static func disarm() { point.disarm() }

    static func pauseIfArmed(_ cell: AnyActorCell) { point.fire(for: cell.system) }
}

/// Debug builds only: pauses the next first turn of a sequential actor of one system
/// between startBody's look at the wake word and its CAS out of `notStarted`, so a test can
/// run a stop in that gap (the start/stop race of the file comment).
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
