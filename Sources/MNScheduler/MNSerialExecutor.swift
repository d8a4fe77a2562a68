// MNSerialExecutor — a SerialExecutor that runs a native Swift actor's jobs on MNScheduler.
//
// Algorithm: the executor *is* a ScheduledUnit. enqueue(job) puts the job (an UnownedJob,
// pointer-sized) on an MPSCQueue (ck_ring + ordered overflow, lock-free on the hot path);
// the enqueue that takes the queue from empty to non-empty schedules the unit. A turn
// drains up to `throughput` jobs in FIFO order and runs each synchronously on this
// executor; .empty → the unit goes idle (the next becameNonEmpty schedules it again),
// otherwise it goes to the back of the run queue. Serial execution follows from the
// scheduler's rule that a unit never runs on two workers at once.
//
// The fast path: a caller running on the same scheduler's workers (a Task started with
// `Task(executorPreference: scheduler.taskExecutor)`, or another MN actor) enqueues from a
// worker, so the actor lands in that worker's next slot and runs right after the caller
// suspends, on the same core; the reply hops back the same way. A caller on Swift's
// default pool pays a cross-thread wake-up per call instead (the injection queue and a
// futex wake). Prefer the task executor for callers of MN actors.
//
// Isolation: the runtime asks isIsolatingCurrentContext() (then checkIsolated()) when
// its own tracking cannot tell; we answer from the worker's "current unit" (set by the
// worker around runTurn), so assumeIsolated/preconditionIsolated succeed inside this
// executor's turns and fail, naming the executor and thread, anywhere else.

//
// After shutdown: the scheduler's workers are gone, so an executor that still gets jobs
// (or was handed back with jobs queued) drains them on a private serial Dispatch queue.
// The idle flag of its MPSCQueue still makes exactly one drainer at a time, and
// isIsolatingCurrentContext() answers true on the draining thread (`fallbackThread`).

import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A serial executor on an MNScheduler, for native Swift actors:
///
/// ```swift
/// actor Counter {
///     let executor = MNSerialExecutor(scheduler: .shared)
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Thread-safety: `enqueue` from any thread. Jobs run one at a time, in enqueue order per
/// enqueuing thread, on the scheduler's workers; after the scheduler has shut down, on a
/// private serial Dispatch queue.
public final class MNSerialExecutor: ScheduledUnit, SerialExecutor, @unchecked Sendable {
    // @unchecked (restated from ScheduledUnit): `scheduler` and `jobs` are immutable
    // references to thread-safe objects; the job queue's consumer side is the unit's turn.
    /// The scheduler whose workers run this executor's jobs.
    public let scheduler: Scheduler

    /// Jobs (UnownedJob bit patterns). Producers: any thread; consumer: this unit's turn.
    let jobs: MPSCQueue

    /// The thread draining jobs after the scheduler shut down (pthread_self bits), 0 when
    /// none. Written by that thread around each drain; read by isolation checks.
    let fallbackThread = Atomic<UInt>(0)

    /// Initial ring slots of the job queue (allocated on first use; it overflows in order).
    public static let jobQueueCapacity = 64

    /// Creates an executor whose jobs run on `scheduler`'s workers. Allocates nothing else
    /// until the first job (the job ring is allocated lazily).
    public init(scheduler: Scheduler) {
        self.scheduler = scheduler
        do {
            jobs = try MPSCQueue(capacity: MNSerialExecutor.jobQueueCapacity)
        } catch {
            preconditionFailure("MNSerialExecutor: \(error)")
        }
        super.init()
    }

    /// Queues a job (any thread, lock-free unless the job ring overflows). The enqueue that
    /// makes the queue non-empty schedules this executor on its scheduler: from one of its
    /// workers, into that worker's next slot. After the scheduler shut down, jobs run on a
    /// private serial Dispatch queue instead (still one at a time, in order).
    public func enqueue(_ job: consuming ExecutorJob) {
        let raw = unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self)
        switch jobs.enqueue(raw) {
        case .accepted(becameNonEmpty: true):
            scheduler.schedule(self)  // after shutdown: runAfterShutdown, below
        case .accepted(becameNonEmpty: false):
            break
        case .closed:
            fatalError("MNSerialExecutor: job enqueued on a closed executor")
        }
    }

    /// Runs up to `budget` jobs in order (called by the scheduler, never concurrently).
    public override func runTurn(budget: Int) -> TurnOutcome {
        let executor = asUnownedSerialExecutor()
        let outcome = jobs.drain(max: budget) { (raw: UnsafeMutableRawPointer) in
            unsafeBitCast(raw, to: UnownedJob.self).runSynchronously(on: executor)
        }
        return outcome == .empty ? .idle : .more
    }

    /// The scheduler has shut down: the queued jobs run on the fallback queue.
    public override func runAfterShutdown() { drainAfterShutdown() }

    /// Runs this executor's queued jobs after its scheduler shut down. The caller holds the
    /// unit exclusively (Scheduler's after-close hand-over), and the fallback queue is
    /// serial, so exactly one drain runs at a time.
    package func drainAfterShutdown() {
        MNSerialExecutor.fallbackQueue.async { [self] in
            let executor = asUnownedSerialExecutor()
            fallbackThread.store(UInt(pthread_self()), ordering: .releasing)
            while jobs.drain(max: Int.max, { (raw: UnsafeMutableRawPointer) in
                unsafeBitCast(raw, to: UnownedJob.self).runSynchronously(on: executor)
            }) == .more {
                sched_yield()  // a producer is between claim and commit
            }
            fallbackThread.store(0, ordering: .releasing)
        }
    }

    /// One serial queue for every executor whose scheduler is gone.
    private static let fallbackQueue = DispatchQueue(label: "MNSerialExecutor.afterShutdown")

    /// This executor for the runtime (identity comparison: one executor, one actor context).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// True exactly when the calling thread is a worker inside this executor's turn.
    public func isIsolatingCurrentContext() -> Bool? {
        guard let worker = Worker.currentUnmanaged else {
            let me = UInt(pthread_self())
            return me != 0 && fallbackThread.load(ordering: .acquiring) == me
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        return worker._withUnsafeGuaranteedRef { $0.currentUnit == me }
    }

    /// Traps unless the caller runs inside this executor's turn, naming where it is instead.
    public func checkIsolated() {
        if isIsolatingCurrentContext() == true { return }
        let location: String
        if let index = Scheduler.currentWorkerIndex {
            location = "MNScheduler worker \(index) running another unit"
        } else {
            location = "a thread outside every MNScheduler pool"
        }
        preconditionFailure("Incorrect actor executor assumption: expected MNSerialExecutor \(ObjectIdentifier(self)), but the caller runs on \(location)")
    }
}
