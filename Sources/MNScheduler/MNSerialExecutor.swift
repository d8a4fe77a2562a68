// MNSerialExecutor: a SerialExecutor that runs a native Swift actor's jobs on MNScheduler.
// The argument for each rule: MNScheduler.docc/Executors.md.
//
// A ScheduledUnit with an MPSCQueue of two-word entries: (0, job); a told closure of the
// bound actor (fn, context), owning one retain of the actor; or (1, box), another actor's
// closure in a heap Call.
//
// Invariants:
//   (E1) Whoever drains holds the queue's consumer claim (MPSCQueue's S1), so drains are
//        ordered and never overlap.
//   (E2) Entries leave in queue order: FIFO per enqueuing thread, jobs and closures alike.
//   (E3) `drainMark` is written only by the drainer, during its drain, and read only on
//        its thread. E1 orders drainers, so it needs no atomics.
//   (E4) A job runs without entering the queue only when the thread that took the claim
//        before pushing it then finds the queue empty.
// Inline fast path: a worker of this scheduler that awaits this idle actor runs its job
// inside the runtime's enqueue; no lock is held across an await, so it cannot deadlock.

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
/// Thread-safety: `enqueue` from any thread. Jobs and told closures run one at a time, in
/// enqueue order per thread, on the scheduler's workers; after shutdown, on a private
/// serial Dispatch queue. An awaited call from this scheduler's pool to an idle actor runs
/// on the caller's worker.
public final class MNSerialExecutor: ScheduledUnit, SerialExecutor, @unchecked Sendable {
    // @unchecked: immutable references to thread-safe objects; the rest is the drainer's (E1, E3).
    /// The scheduler's state for this unit (first: UnitHeader.swift, H1).
    /// Its own turn is `runTurn`, called directly (UnitTurn.swift).
    public let unitHeader = UnitHeader(kind: MNSerialExecutor.unitKind) { unit, budget, _ in
        unsafeDowncast(unit, to: MNSerialExecutor.self).runTurn(budget: budget)
    }

    /// This type's kind.
    static let unitKind = UnitKind.register(MNSerialExecutor.self)

    /// The scheduler whose workers run this executor's jobs.
    public let scheduler: Scheduler

    /// Entries (jobs and told closures).
    let jobs: MPSCQueue

    /// What the current drain runs (E3): the job's bits, 0 between jobs, or the inline run's
    /// host unit's bits | 1.
    @exclusivity(unchecked) var drainMark: UInt = 0

    /// The job the current turn's drain is running (E3), else nil.
    var runningJob: UnsafeMutableRawPointer? {
        drainMark & 1 == 0 ? UnsafeMutableRawPointer(bitPattern: drainMark) : nil
    }

    /// The unit the current inline run is nested in (E3), nil in a turn's drain.
    var inlineHost: UnsafeMutableRawPointer? {
        drainMark & 1 == 1 ? UnsafeMutableRawPointer(bitPattern: drainMark & ~1) : nil
    }

    /// Per thread: the executor it drains off the pool, for isolation checks.
    private static let offPoolKey: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "MNSerialExecutor: pthread_key_create failed (\(rc))")
        return key
    }()

    /// Ring slots of an executor's queue, allocated on the first queued entry; a burst past
    /// them goes to the ordered overflow. Small: every actor that has queued keeps its ring.
    public static let jobQueueCapacity = 16

    /// The actor whose told closures take the two-word form, set once by CAS; 0 until then.
    /// Unretained: each entry retains the actor.
    let boundActor = Atomic<UInt>(0)

    /// A told closure of `boundActor`, as `tell` writes it.
    struct BoundCall {
        let body: (AnyObject) -> Void
    }

    /// A told closure of another actor, in its heap box.
    struct Call {
        let actor: AnyObject
        let body: (AnyObject) -> Void
    }

    /// Bytes of one queue entry: two words.
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

    /// Creates an executor whose jobs run on `scheduler`'s workers. The job ring is
    /// allocated with the first queued job.
    public init(scheduler: Scheduler) {
        self.scheduler = scheduler
        do {
            jobs = try MPSCQueue(capacity: MNSerialExecutor.jobQueueCapacity, itemBytes: MNSerialExecutor.entryBytes)
        } catch {
            preconditionFailure("MNSerialExecutor: \(error)")
        }
    }

    /// Queues a job, from any thread; lock-free unless the job ring overflows. The enqueue
    /// that makes the queue busy either runs it inline (the inline fast path) or schedules
    /// this executor. After shutdown, jobs run on a private serial Dispatch queue, still
    /// one at a time and in order.
    public func enqueue(_ job: consuming ExecutorJob) {
        let raw = unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self)
        let worker = Worker.currentUnmanaged
        if let worker, worker._withUnsafeGuaranteedRef({ canRunInline(raw, on: $0) }) {
            // The inline fast path (E4).
            if jobs.claimConsumer() {
                worker._withUnsafeGuaranteedRef { runInline(raw, on: $0) }
                return
            }
        }
        enqueueQueued(raw)
    }

    /// Queues a job; the push that takes the consumer claim schedules a turn.
    @inline(never)
    private func enqueueQueued(_ raw: UnsafeMutableRawPointer) {
        var words = (MNSerialExecutor.jobTag, UInt(bitPattern: raw))
        guard claimed(jobs.enqueue(moving: &words)) else { return }
        scheduler.schedule(self)  // after shutdown: runAfterShutdown, below
    }

    /// True when `actor` is this executor's bound actor, binding it if none is bound.
    @usableFromInline
    func isBound(to actor: UInt) -> Bool {
        let bound = boundActor.load(ordering: .acquiring)
        if bound == actor { return true }
        if bound != 0 { return false }
        let (won, current) = boundActor.compareExchange(expected: 0, desired: actor, ordering: .acquiringAndReleasing)
        return won || current == actor
    }

    /// Queues a told closure (its two words at `entry`); never runs it inline.
    @usableFromInline
    func enqueue(movingCall entry: UnsafeRawPointer) {
        if claimed(jobs.enqueue(moving: entry)) { scheduler.schedule(self) }
    }

    /// True when the push took the consumer claim.
    @inline(__always)
    private func claimed(_ result: MPSCQueue.EnqueueResult) -> Bool {
        switch result {
        case .accepted(let becameNonEmpty): return becameNonEmpty
        case .closed: fatalError("MNSerialExecutor: job enqueued on a closed executor")  // never closed
        }
    }

    /// Conditions (a)–(d) of the inline fast path (Executors.md).
    @inline(__always)
    private func canRunInline(_ raw: UnsafeMutableRawPointer, on worker: Worker) -> Bool {
        guard worker.schedulerID == scheduler.id, let host = worker.currentUnit,
              !scheduler.core.closed.load(ordering: .relaxed) else { return false }
        if let lane = MNTaskExecutor.Lane.ifLane(host) {
            return lane._withUnsafeGuaranteedRef { $0.runningJob == raw }
        }
        if let actor = MNSerialExecutor.ifSerialExecutor(host) {
            return actor._withUnsafeGuaranteedRef { $0.drainMark == UInt(bitPattern: raw) }  // a job, in a turn: not inline (d)
        }
        return false
    }

    /// True when nothing is queued. Claim holder only.
    @inline(__always)
    private var isQueueEmpty: Bool {
        if jobs.overflowActive.load(ordering: .acquiring) { return false }
        guard let block = jobs.ringBlock else { return true }
        let ring = RawRing(block: block)
        return jobs.overflowList(ring)?.pendingChunk == nil && ring.isQuiescent
    }

    /// Runs `raw` inline (E4), or behind what is queued (E2), then drains; the caller holds
    /// the claim. Leftovers get a scheduled turn.
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
            // Entries are waiting: the job goes behind them. We hold the claim: no new claim.
            var words = (MNSerialExecutor.jobTag, UInt(bitPattern: raw))
            _ = jobs.enqueue(moving: &words)
        }
        let outcome = drainOrSettle(max: budget, inlineHost: host)
        worker.currentUnit = host
        if outcome == .more { scheduler.schedule(self) }
    }

    /// `drain` for a claim holder that may find no ring yet (E4): goes idle itself, the ring
    /// install standing in for the producer's claim in the Dekker pair.
    @inline(__always)
    private func drainOrSettle(max: Int, inlineHost host: UnsafeMutableRawPointer?) -> MPSCQueue.DrainOutcome {
        if jobs.ringBlock == nil {
            jobs.idleOrFirstSlot.store(MPSCQueue.FirstSlot.idle, ordering: .sequentiallyConsistent)
            #if !arch(x86_64)
            atomicMemoryFence(ordering: .sequentiallyConsistent)  // `dmb ish`: the store before the load
            #endif
            if jobs.ringBlock == nil { return .empty }
            guard jobs.claimConsumer() else { return .empty }
        }
        return drain(max: max, inlineHost: host)
    }

    /// The unit at `entry` as an MNSerialExecutor, or nil (a kind compare).
    @inline(__always)
    static func ifSerialExecutor(_ entry: UnsafeMutableRawPointer) -> Unmanaged<MNSerialExecutor>? {
        UnitHeader.at(entry).pointee.kind == unitKind ? Unmanaged<MNSerialExecutor>.fromOpaque(entry) : nil
    }

    /// Runs up to `max` entries in order, holding the consumer claim (E1, E3).
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
    /// Inlined into the unit's own turn.
    @inline(__always)
    public func runTurn(budget: Int) -> TurnOutcome {
        let outcome = scheduler.gate.deterministic == nil ? drain(max: budget) : drainOffPool(max: budget)
        return outcome == .empty ? .idle : .more
    }

    /// `drain` off the workers, marked for isolation checks.
    private func drainOffPool(max: Int) -> MPSCQueue.DrainOutcome {
        let key = MNSerialExecutor.offPoolKey
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return drain(max: max)
    }

    /// The scheduler has shut down: the queued jobs run on the fallback queue.
    public func runAfterShutdown() { drainAfterShutdown() }

    /// Runs the queued entries after shutdown; the fallback queue is serial (E1).
    package func drainAfterShutdown() {
        MNSerialExecutor.fallbackQueue.async { [self] in
            while drainOffPool(max: Int.max) == .more {
                sched_yield()  // a producer is between claim and publish
            }
        }
    }

    /// One serial queue for every executor whose scheduler is gone.
    private static let fallbackQueue = DispatchQueue(label: "MNSerialExecutor.afterShutdown")

    /// This executor for the runtime (identity comparison: one executor, one actor context).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// `true` exactly when the calling thread is draining this executor (a worker in its
    /// turn or inline run, the fallback thread, a deterministic driver); `nil` anywhere
    /// else, never `false`: test `!= true` for "not isolated". With `nil` the runtime asks
    /// ``checkIsolated()``, whose trap names this executor and what runs instead.
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

    /// Traps with ``isolationFailureMessage()`` unless the caller runs inside this
    /// executor's drain. A `fatalError`, whose message an optimised build still prints.
    public func checkIsolated() {
        if isolatesCurrentThread { return }
        fatalError(isolationFailureMessage())
    }

    /// What ``checkIsolated()`` traps with on the current thread: this executor, then
    /// where the caller runs instead (a worker and the unit whose turn it is in, another
    /// executor's off-pool drainer, or a thread outside every scheduler), by thread id and
    /// name. Any thread; allocates.
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

    /// A running unit for messages: kind, type, address.
    private static func describeUnit(_ raw: UnsafeMutableRawPointer) -> String {
        let unit = UnitKind.unit(at: raw)
        if let executor = unit as? MNSerialExecutor { return describe(executor) }
        if MNTaskExecutor.Lane.ifLane(raw) != nil { return "MNTaskExecutor lane \(address(of: unit)) (a task's job)" }
        return "\(String(reflecting: type(of: unit))) \(address(of: unit))"  // an actor cell: ActorCell<TheActor>
    }

    private static func address(of object: AnyObject) -> String {
        "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
    }

    /// The calling thread for messages: name and kernel thread id.
    private static func currentThreadDescription() -> String {
        let tid = ckplat_thread_id()
        var buffer = [CChar](repeating: 0, count: 64)
        let name = ckplat_get_thread_name(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return name.isEmpty ? "thread \(tid)" : "thread \(tid) '\(name)'"
    }
}
