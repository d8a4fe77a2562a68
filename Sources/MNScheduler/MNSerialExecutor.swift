// MNSerialExecutor — a SerialExecutor that runs a native Swift actor's jobs on MNScheduler.
//
// Algorithm: the executor *is* a ScheduledUnit. Its queue, an MPSCQueue of two-word entries
// moved bitwise into ring slots (16 × 16 bytes, allocated with the first queued entry, so
// an actor that only ever gets direct runs (E4) has none; a burst past them goes to the
// queue's ordered overflow chunks), holds jobs
// and told closures (`MNActor.tell`), told apart by the first word:
//   (0, job)      a job (UnownedJob bits);
//   (fn, context) a told closure of the executor's *bound actor* — the first actor that told
//                 through it (`boundActor`, set once by CAS, unretained) — which the entry
//                 holds one retain of, released after the call (fn is a code address: never
//                 0 or 1). The entry owns the closure: `tell` consumes it and moves it in
//                 (no retain of its context), the drain moves it out and releases it after
//                 the call;
//   (1, box)      a told closure of another actor sharing the executor: a heap `Call` (the
//                 retained actor and the closure), freed after the call. Rare: one actor per
//                 executor is the usual shape.
// An enqueue that takes the queue
// from empty to non-empty (MPSCQueue's consumer claim, `becameNonEmpty`) makes its caller
// the one consumer due: it either runs the queue inline (below) or schedules the unit. A
// turn drains up to `throughput` entries in FIFO order — a job runs synchronously on this
// executor, a closure is called with its actor — then .empty → the unit goes idle (the next
// claim schedules it again), otherwise it goes to the back of the run queue.
//
// Rules (why jobs of one actor never run at once, and run in order):
//   (E1) Whoever drains holds MPSCQueue's consumer claim (S1 in MPSCQueue.swift): a worker's
//        turn, an inline run, the fallback queue after shutdown, or the thread driving a
//        DeterministicScheduler. The claim passes from
//        one drainer to the next through the idle flag (the drainer's seq_cst store of
//        `true`, the next claimer's acquire-release CAS), so each drain happens-after the
//        previous one and exactly one runs at a time. (The unit's state word additionally
//        keeps turns from overlapping: R2 in ScheduledUnit.swift.)
//   (E2) Entries leave the queue in MPSCQueue's order: FIFO per enqueuing thread, across
//        jobs and told closures alike (one queue).
//   (E3) `drainMark` — in a turn's drain the job it is running (`runningJob`, 0 between
//        jobs and during a closure); in an inline run the unit whose turn it is nested in,
//        with bit 0 set (`inlineHost`; job and unit addresses are 8-aligned, so the two
//        forms never meet) — is written only by the drainer, before and around each entry
//        (and before a direct run, E4) — never after the drain returns, as by then the
//        claim may already be someone else's — and read only on the drainer's own thread,
//        by an enqueue made from inside an entry. E1 orders successive drainers, so it
//        needs no atomics. (One word, not two: an inline run needs no running job, since an
//        enqueue from inside it never runs inline (d).)
//   (E4) A direct run: a job may run without entering the queue, by the thread that took
//        the consumer claim *before* pushing it (the inline fast path below), and only if
//        the claim holder then finds the queue empty — no ring slot claimed (p_head ==
//        c_head, which counts claimed-but-uncommitted slots), no overflow, no pending
//        chunk. Anything queued earlier by the same thread or task happens-before that look,
//        so it is seen and the job is pushed behind it instead (E2); entries of other
//        threads racing the look are unordered with the job anyway, and the drain that
//        follows the run takes them. That drain may find no ring at all, and
//        MPSCQueue.drain goes idle on a ring-less queue without looking again; so the
//        claim holder goes idle itself (`drainOrSettle`): idle flag stored (seq_cst),
//        full fence (x86: the store is an xchg; AArch64: `dmb ish`), ring pointer loaded.
//        A producer installs the ring before it claims a slot, then fences and loads the
//        flag (MPSCQueue's Dekker pair): so either it sees the flag idle and schedules, or
//        this load sees its ring and the holder takes the claim back (or finds it taken)
//        and drains with the ring's own idle protocol. A turn never starts on a ring-less
//        queue: every schedule() follows a push or such a drain.
//
// The inline fast path (an awaited call from the pool): a task running on this
// scheduler's worker — in a turn of an MNTaskExecutor lane or of another MNSerialExecutor —
// that awaits this actor goes through the runtime's swift_task_switch, which enqueues the
// task itself here (the runtime never assumes a thread for a custom executor). When that
// enqueue (a) runs on a worker of this scheduler, (b) is of the job the host unit is running
// right now (`runningJob`: only the task's own switch can enqueue a running task, and the
// runtime has already let go of it), (c) wins the consumer claim (the actor was idle),
// and (d) the host is not itself an inline run (depth ≤ 1), the enqueue runs the job right
// there, on this thread, with `currentUnit` set to this executor (isolation checks answer
// true): directly if the queue is empty (E4), else pushed behind what is queued; then it
// drains the queue, up to `throughput` entries in all; leftover work schedules the unit as
// usual. The task's hop back then lands in the host: a lane takes its own running job back
// into its resume slot (MNTaskExecutor.swift), another actor's queue is mid-drain and just
// queues it, and the host runs the continuation once the inline run has unwound. A round
// trip from a lane therefore costs no queue push at all (an idle actor), no schedule(), no
// run-queue trip and no second turn. No user lock can be held across an await, and the runtime holds none while it
// enqueues, so running the job inside enqueue cannot deadlock. Anything else (a caller
// off the pool, a busy actor, a nested inline run) takes the scheduled path: from a worker
// the unit lands in that worker's next slot and runs right after the caller suspends;
// from outside it costs a cross-thread wake-up (the injection queue and a futex wake).
//
// What is left of an awaited call's cost is Swift's runtime, not this path: the runtime
// switches into a custom executor only by enqueueing the task (two enqueues and two job
// runs per call, each with a task dependency record, and for a task with an executor
// preference a look-up under the task's status-record mutex on every switch). With
// executors that do nothing but run jobs the same calls cost 2,286 instructions
// (instruction-probe `mnfloor`) against this path's 2,458 (`mnactor`) and a default
// actor's 703 (`swiftactor`): see Benchmarks/README.md, "Instructions per message".
//
// Lifetime (issue 9, item 3): what keeps this executor alive from a schedule to the end of
// the turn is the schedule's own retain (an MNSerialExecutor has no owner: ScheduledUnit's
// L2, released by the worker after T4, L3), not the actor: a turn's last two-word entry
// releases the entry's retain of the actor after its call, and when that was the last
// reference (an actor owning its executor, the usual shape) the actor is freed inside the
// turn, while the drain still reads the queue and the worker still has T4 to do; the
// schedule's retain is what frees the executor only after that. So a told message costs
// the actor's retain/release pair (the entry's) per message plus the executor's pair per
// turn — one turn per message when the actor goes idle between messages (a ping-pong).
// An unretained (owned) schedule would need a release deferred past the worker's T4:
// Worker's business, not done. Tested: MNActorTests "an actor that owns its executor, freed
// by its last told closure's release inside the turn …" (ASan-clean; with the schedule's
// retain dropped it reports a heap-use-after-free in Worker.runUnit).
//
// Isolation: the runtime asks isIsolatingCurrentContext() (then checkIsolated()) when
// its own tracking cannot tell (a told closure, assumeIsolated in synchronous code); we
// answer from the worker's "current unit" (set by the worker around runTurn, and by an
// inline run around its drain), so assumeIsolated/preconditionIsolated succeed inside
// this executor's drains and fail anywhere else. Elsewhere the answer is nil, not false:
// the runtime then calls checkIsolated(), whose trap names this executor and what the
// thread runs instead (isolationFailureMessage); after a false it traps with its own
// message, which names neither.
//
// After shutdown: the scheduler's workers are gone, so an executor that still gets jobs or
// told closures (or was handed back with some queued) drains them on a private serial
// Dispatch queue: still one drainer at a time (E1), still in order (E2), and
// isIsolatingCurrentContext() answers true on the draining thread (recorded per thread
// under `offPoolKey`, as is a DeterministicScheduler's driving thread during a turn).
// Nothing enqueued is ever dropped.

import CConcurrencyKit
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial executor on an MNScheduler, for native Swift actors:
///
/// ```swift
/// actor Counter: MNActor {
///     nonisolated let executor = MNSerialExecutor(scheduler: .shared)
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Thread-safety: `enqueue` from any thread. Jobs (and closures sent with
/// ``MNActor/tell(_:)``) run one at a time, in enqueue order per enqueuing thread, on the
/// scheduler's workers; after the scheduler has shut down, on a private serial Dispatch
/// queue. An awaited call from a task on this scheduler's ``Scheduler/taskExecutor`` (or
/// from another actor on this scheduler) to an idle actor runs on the caller's worker
/// without a trip through the run queue.
public final class MNSerialExecutor: ScheduledUnit, SerialExecutor, @unchecked Sendable {
    // @unchecked (restated from ScheduledUnit): `scheduler` and `jobs` are immutable
    // references to thread-safe objects; the queue's consumer side and `drainMark`
    // belong to the one drainer (E1, E3 in the file comment).
    /// The scheduler whose workers run this executor's jobs.
    public let scheduler: Scheduler

    /// Entries (jobs and told closures). Producers: any thread; consumer: the drainer (E1).
    let jobs: MPSCQueue

    /// What the current drain is doing (E3): the running job's bits in a turn, 0 between
    /// jobs; the host unit's bits | 1 in an inline run. Meaningful only to the drainer.
    @exclusivity(unchecked) var drainMark: UInt = 0

    /// The job the current turn's drain is running (E3), nil between jobs, during a
    /// closure, and in an inline run.
    var runningJob: UnsafeMutableRawPointer? {
        drainMark & 1 == 0 ? UnsafeMutableRawPointer(bitPattern: drainMark) : nil
    }

    /// The unit the current inline run is nested in (E3), nil in a turn's drain.
    var inlineHost: UnsafeMutableRawPointer? {
        drainMark & 1 == 1 ? UnsafeMutableRawPointer(bitPattern: drainMark & ~1) : nil
    }

    /// The executor the calling thread is draining off the pool (the fallback queue's
    /// thread after shutdown, a DeterministicScheduler's driving thread in a turn), per
    /// thread: set around each such drain by the draining thread, read by its isolation
    /// checks. (Per thread, not a word in every executor: see `drainOffPool`.)
    private static let offPoolKey: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "MNSerialExecutor: pthread_key_create failed (\(rc))")
        return key
    }()

    /// Ring slots of an executor's queue (allocated on the first queued entry; a burst past
    /// them goes to the queue's ordered overflow, one allocation per chunk of up to 1,024
    /// entries). Small, because every actor that has queued keeps its ring: 16 two-word
    /// slots are 464 bytes. (An actor that only gets direct runs, E4, has none.)
    public static let jobQueueCapacity = 16

    /// The actor whose told closures take the two-word form (file comment), as object
    /// bits; 0 until the first tell. Set once (CAS 0 → actor, acquiring-and-releasing) by
    /// `tell`; read (acquiring) by `tell` and by the drain of a two-word closure entry, which
    /// the enqueue of that entry orders after the CAS anyway. Unretained: each entry holds
    /// its own retain of the actor.
    let boundActor = Atomic<UInt>(0)

    /// A told closure, as the drain calls it: the closure `MNActor.tell` wrote (as an
    /// `MNBoundCall<Self>`, the same two words) and the actor it is called with.
    struct BoundCall {
        let body: (AnyObject) -> Void
    }

    /// A told closure of an actor other than `boundActor`, in its heap box (written by
    /// `tell` as an `MNActorCall<Self>`, the same layout).
    struct Call {
        let actor: AnyObject
        let body: (AnyObject) -> Void
    }

    /// Bytes of one queue entry (two words: see the file comment).
    @usableFromInline static let entryBytes = 16

    /// The first word of an entry holding a job.
    @usableFromInline static let jobTag: UInt = 0
    /// The first word of an entry holding a boxed `Call`.
    @usableFromInline static let boxTag: UInt = 1

    /// An entry taken out of its slot.
    enum Taken {
        case job(UnsafeMutableRawPointer)
        case bound(BoundCall)
        case boxed(Call)
    }

    /// Creates an executor whose jobs run on `scheduler`'s workers. Allocates nothing else
    /// until the first job (the job ring is allocated lazily).
    public init(scheduler: Scheduler) {
        self.scheduler = scheduler
        do {
            jobs = try MPSCQueue(capacity: MNSerialExecutor.jobQueueCapacity, itemBytes: MNSerialExecutor.entryBytes)
        } catch {
            preconditionFailure("MNSerialExecutor: \(error)")
        }
        super.init()
    }

    /// Queues a job (any thread, lock-free unless the job ring overflows). The enqueue that
    /// makes the queue non-empty either runs the queue inline (a task on this scheduler's
    /// worker awaiting an idle actor: see the file comment) or schedules this executor on its
    /// scheduler: from one of its workers, into that worker's next slot. After the scheduler
    /// shut down, jobs run on a private serial Dispatch queue instead (still one at a time,
    /// in order).
    public func enqueue(_ job: consuming ExecutorJob) {
        let raw = unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self)
        let worker = Worker.currentUnmanaged
        if let worker, worker._withUnsafeGuaranteedRef({ canRunInline(raw, on: $0) }) {
            // The inline fast path (file comment): take the consumer claim first; an idle
            // actor with nothing queued runs the job directly, without a trip through its
            // queue (E4).
            if jobs.claimConsumer() {
                worker._withUnsafeGuaranteedRef { runInline(raw, on: $0) }
                return
            }
        }
        enqueueQueued(raw)
    }

    /// Queues a job (the path of every enqueue but a direct run); the push that takes the
    /// consumer claim gets a turn scheduled.
    @inline(never)
    private func enqueueQueued(_ raw: UnsafeMutableRawPointer) {
        var words = (MNSerialExecutor.jobTag, UInt(bitPattern: raw))
        guard claimed(jobs.enqueue(moving: &words)) else { return }
        scheduler.schedule(self)  // after shutdown: runAfterShutdown, below
    }

    /// True when `actor` (object bits) is this executor's bound actor, binding it if no
    /// actor is bound yet (see `boundActor`).
    @usableFromInline
    func isBound(to actor: UInt) -> Bool {
        let bound = boundActor.load(ordering: .acquiring)
        if bound == actor { return true }
        if bound != 0 { return false }
        let (won, current) = boundActor.compareExchange(expected: 0, desired: actor, ordering: .acquiringAndReleasing)
        return won || current == actor
    }

    /// Queues a told closure: `entry` points to its two words (file comment), which the
    /// queue takes over. Never runs it inline: the caller goes on.
    @usableFromInline
    func enqueue(movingCall entry: UnsafeRawPointer) {
        if claimed(jobs.enqueue(moving: entry)) { scheduler.schedule(self) }
    }

    /// True when the push took the consumer claim (becameNonEmpty).
    @inline(__always)
    private func claimed(_ result: MPSCQueue.EnqueueResult) -> Bool {
        switch result {
        case .accepted(let becameNonEmpty): return becameNonEmpty
        case .closed: fatalError("MNSerialExecutor: job enqueued on a closed executor")  // never closed
        }
    }

    /// Conditions (a)–(d) of the inline fast path (file comment), on the calling worker.
    @inline(__always)
    private func canRunInline(_ raw: UnsafeMutableRawPointer, on worker: Worker) -> Bool {
        guard worker.schedulerID == scheduler.id, let host = worker.currentUnit,
              !scheduler.core.closed.load(ordering: .relaxed) else { return false }
        return Unmanaged<ScheduledUnit>.fromOpaque(host)._withUnsafeGuaranteedRef { unit in
            if let lane = MNTaskExecutor.Lane.ifLane(unit) { return lane.runningJob == raw }
            if let actor = MNSerialExecutor.ifSerialExecutor(unit) {
                return actor.drainMark == UInt(bitPattern: raw)   // a job, in a turn: not inline (d)
            }
            return false
        }
    }

    /// True when nothing is queued: no ring slot claimed, no overflow. Only the holder of
    /// the consumer claim may ask (it reads the consumer-private pending chain).
    @inline(__always)
    private var isQueueEmpty: Bool {
        if jobs.overflowActive.load(ordering: .acquiring) { return false }
        guard let block = jobs.ringBlock else { return true }
        let ring = RawRing(block: block)
        return jobs.overflowList(ring)?.pendingChunk == nil && ring.isQuiescent
    }

    /// Runs `raw`, then drains the queue, on this worker, nested in its current unit's turn
    /// (the caller holds the consumer claim and did not queue `raw`): directly if nothing
    /// is queued (E4), else behind what is (E2). Leftover entries get a scheduled turn.
    @inline(never)
    private func runInline(_ raw: UnsafeMutableRawPointer, on worker: Worker) {
        let host = worker.currentUnit
        worker.currentUnit = Unmanaged.passUnretained(self).toOpaque()
        var budget = worker.throughput
        if isQueueEmpty {
            drainMark = UInt(bitPattern: host) | 1
            unsafeBitCast(raw, to: UnownedJob.self).runSynchronously(on: asUnownedSerialExecutor())
            budget -= 1
        } else {
            // Entries are waiting (perhaps this task's own earlier tells): the job goes
            // behind them. We hold the claim, so this push claims nothing.
            var words = (MNSerialExecutor.jobTag, UInt(bitPattern: raw))
            _ = jobs.enqueue(moving: &words)
        }
        let outcome = drainOrSettle(max: budget, inlineHost: host)
        worker.currentUnit = host
        if outcome == .more { scheduler.schedule(self) }
    }

    /// `drain`, for a claim holder that may find no ring yet (E4: a queue that only ever
    /// saw direct runs has none). `MPSCQueue.drain` on a ring-less queue goes idle without
    /// looking again, which would strand an entry whose producer installed the ring after
    /// that look; so this goes idle itself — store the idle flag (seq_cst), fence, then
    /// look for a ring — the consumer's half of MPSCQueue's Dekker pair with the ring
    /// install standing in for the ticket claim (a producer installs the ring before it
    /// claims a slot). No ring: idle. A ring: take the claim back and drain as usual (its
    /// own idle protocol then sees every claimed slot), or a producer already took it and
    /// schedules the turn.
    @inline(__always)
    private func drainOrSettle(max: Int, inlineHost host: UnsafeMutableRawPointer?) -> MPSCQueue.DrainOutcome {
        if jobs.ringBlock == nil {
            jobs.consumerIdle.store(true, ordering: .sequentiallyConsistent)
            #if !arch(x86_64)
            atomicMemoryFence(ordering: .sequentiallyConsistent)  // `dmb ish`: the store before the load
            #endif
            if jobs.ringBlock == nil { return .empty }
            guard jobs.claimConsumer() else { return .empty }
        }
        return drain(max: max, inlineHost: host)
    }

    /// `unit` as an MNSerialExecutor, or nil (a class-pointer compare: the class is final).
    @inline(__always)
    static func ifSerialExecutor(_ unit: ScheduledUnit) -> MNSerialExecutor? {
        ObjectIdentifier(type(of: unit)) == ObjectIdentifier(MNSerialExecutor.self)
            ? unsafeDowncast(unit, to: MNSerialExecutor.self) : nil
    }

    /// Runs up to `max` entries in order. The caller holds the consumer claim (E1), which
    /// `jobs.drain` gives up when the queue runs dry: so `drainMark` is written only inside
    /// the body, before and around each entry (E3), never after.
    @inline(__always)
    private func drain(max: Int, inlineHost host: UnsafeMutableRawPointer? = nil) -> MPSCQueue.DrainOutcome {
        let executor = asUnownedSerialExecutor()
        let inlineMark = host.map { UInt(bitPattern: $0) | 1 } ?? 0
        return jobs.drain(max: max, itemBytes: MNSerialExecutor.entryBytes, taking: MNSerialExecutor.take) { entry in
            drainMark = inlineMark
            switch entry {
            case .job(let raw):
                if inlineMark == 0 { drainMark = UInt(bitPattern: raw) }
                unsafeBitCast(raw, to: UnownedJob.self).runSynchronously(on: executor)
                drainMark = inlineMark
            case .bound(let call):
                let actor = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: boundActor.load(ordering: .acquiring))!)
                call.body(actor.takeRetainedValue())   // the entry's retain, released after the call
            case .boxed(let call):
                call.body(call.actor)
            }
        }
    }

    /// Moves an entry out of its slot.
    @inline(__always)
    static func take(_ slot: UnsafeMutableRawPointer) -> Taken {
        switch slot.load(as: UInt.self) {
        case jobTag:
            return .job(slot.load(fromByteOffset: MemoryLayout<UInt>.stride, as: UnsafeMutableRawPointer.self))
        case boxTag:
            let box = slot.load(fromByteOffset: MemoryLayout<UInt>.stride, as: UnsafeMutablePointer<Call>.self)
            defer { box.deallocate() }
            return .boxed(box.move())
        default:
            return .bound(slot.bindMemory(to: BoundCall.self, capacity: 1).move())
        }
    }

    /// Runs up to `budget` entries in order (called by the scheduler, never concurrently).
    public override func runTurn(budget: Int) -> TurnOutcome {
        // A DeterministicScheduler runs turns on the thread that drives it, not a worker.
        let outcome = scheduler.gate.deterministic == nil ? drain(max: budget) : drainOffPool(max: budget)
        return outcome == .empty ? .idle : .more
    }

    /// `drain` on a thread that is no worker, which isolation checks then recognise.
    private func drainOffPool(max: Int) -> MPSCQueue.DrainOutcome {
        let key = MNSerialExecutor.offPoolKey
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return drain(max: max)
    }

    /// The scheduler has shut down: the queued jobs run on the fallback queue.
    public override func runAfterShutdown() { drainAfterShutdown() }

    /// Runs this executor's queued entries after its scheduler shut down. The caller holds
    /// the unit exclusively (Scheduler's after-close hand-over), and the fallback queue is
    /// serial, so exactly one drain runs at a time.
    package func drainAfterShutdown() {
        MNSerialExecutor.fallbackQueue.async { [self] in
            while drainOffPool(max: Int.max) == .more {
                sched_yield()  // a producer is between claim and commit
            }
        }
    }

    /// One serial queue for every executor whose scheduler is gone.
    private static let fallbackQueue = DispatchQueue(label: "MNSerialExecutor.afterShutdown")

    /// This executor for the runtime (identity comparison: one executor, one actor context).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// `true` exactly when the calling thread is draining this executor: a worker inside its
    /// turn or inline run, the fallback thread after shutdown, or the thread driving a
    /// DeterministicScheduler's turn of it; `nil` anywhere else — never `false`, so test
    /// `!= true` for "not isolated".
    ///
    /// Why `nil`: Swift's runtime takes a `false` as final and traps (in `assumeIsolated`,
    /// `preconditionIsolated`, `assertIsolated`) with its own message, which names neither
    /// this executor nor what runs instead (Swift 6.3: "Expected same executor as
    /// Counter.", or "Expected 'UnownedSerialExecutor(executor: (Opaque Value))'
    /// executor."). For `nil` ("cannot tell") it asks ``checkIsolated()`` in those
    /// checks, whose message does (``isolationFailureMessage()``), and in its checks that
    /// must not trap (isolated conformances, warnings) it takes `nil` as "not isolated",
    /// as it took `false`. The answer is exact either way.
    public func isIsolatingCurrentContext() -> Bool? {
        isolatesCurrentThread ? true : nil
    }

    /// True exactly when the calling thread is draining this executor (see
    /// `isIsolatingCurrentContext()`).
    var isolatesCurrentThread: Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let worker = Worker.currentUnmanaged else {
            return pthread_getspecific(MNSerialExecutor.offPoolKey) == me
        }
        return worker._withUnsafeGuaranteedRef { $0.currentUnit == me }
    }

    /// Traps unless the caller runs inside this executor's drain, with
    /// ``isolationFailureMessage()``: the executor expected and what the calling thread
    /// runs instead. Swift's runtime calls it when `assumeIsolated`, `preconditionIsolated`
    /// or `assertIsolated` of an actor on this executor runs elsewhere. A `fatalError`, not
    /// a `preconditionFailure`: an optimised build prints the latter's message not at all.
    public func checkIsolated() {
        if isolatesCurrentThread { return }
        fatalError(isolationFailureMessage())
    }

    /// What ``checkIsolated()`` traps with when called on the current thread: this executor
    /// (its address and scheduler), then where the caller runs instead — the scheduler
    /// worker and its thread, with the unit whose turn it is in (another actor's executor,
    /// a FastMailbox actor's cell with the actor's type, a task executor's lane); the
    /// thread that drains another executor off the pool or drives a DeterministicScheduler;
    /// or a thread outside every scheduler. Threads are given by kernel id and name.
    /// Any thread; allocates (a trap's path, or a test's).
    public func isolationFailureMessage() -> String {
        "Incorrect actor executor assumption: expected \(MNSerialExecutor.describe(self)), "
            + "but the caller runs on \(MNSerialExecutor.describeCurrentContext())"
    }

    /// "MNSerialExecutor 0x… on scheduler N" for messages.
    static func describe(_ executor: MNSerialExecutor) -> String {
        "MNSerialExecutor \(address(of: executor)) on scheduler \(executor.scheduler.id)"
    }

    /// Where the calling thread runs, for isolation failure messages.
    static func describeCurrentContext() -> String {
        let thread = currentThreadDescription()
        if let worker = Worker.currentUnmanaged {
            return worker._withUnsafeGuaranteedRef { worker in
                let place = (worker.isSpare ? "spare thread \(worker.index - worker.core.queues.count)" : "worker \(worker.index)")
                    + " of scheduler \(worker.schedulerID) (\(thread))"
                // The unit whose turn this is: alive until the turn ends, and the caller is in it.
                guard let unit = worker.currentUnit else { return "\(place), between turns" }
                return "\(place), in a turn of \(describeUnit(unit))"
            }
        }
        if let draining = pthread_getspecific(offPoolKey) {
            let executor = Unmanaged<MNSerialExecutor>.fromOpaque(draining).takeUnretainedValue()
            return "\(thread), off the pool, draining \(describe(executor))"
        }
        if SchedulerClock.currentTurn.virtual != nil {
            return "\(thread), driving a DeterministicScheduler (a turn of another unit, or between turns)"
        }
        return "\(thread), outside every MNScheduler pool"
    }

    /// A running unit for messages: its kind, type and address.
    private static func describeUnit(_ raw: UnsafeMutableRawPointer) -> String {
        let unit = Unmanaged<ScheduledUnit>.fromOpaque(raw).takeUnretainedValue()
        if let executor = unit as? MNSerialExecutor { return describe(executor) }
        if MNTaskExecutor.Lane.ifLane(unit) != nil { return "MNTaskExecutor lane \(address(of: unit)) (a task's job)" }
        return "\(String(reflecting: type(of: unit))) \(address(of: unit))"  // an actor cell: ActorCell<TheActor>
    }

    private static func address(of object: AnyObject) -> String {
        "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
    }

    /// The calling thread for messages: its name (`mn-worker-N`, a Dispatch thread's, the
    /// program's) and its id (ckplat_thread_id: the kernel thread id on Linux).
    private static func currentThreadDescription() -> String {
        let tid = ckplat_thread_id()
        var buffer = [CChar](repeating: 0, count: 64)
        let name = ckplat_get_thread_name(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return name.isEmpty ? "thread \(tid)" : "thread \(tid) '\(name)'"
    }
}
