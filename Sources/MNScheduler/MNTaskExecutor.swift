// MNTaskExecutor — a TaskExecutor that runs Swift tasks on MNScheduler's workers.
//
// Algorithm: jobs of tasks are not serial, so one queue-and-unit would serialise them.
// Instead the executor has 4×W *lanes*; each lane is a ScheduledUnit with an MPSCQueue of
// jobs, exactly like MNSerialExecutor. A job goes to the next lane in round-robin order
// (a per-worker cursor on a worker, an atomic cursor from outside), so independent tasks
// spread over lanes and lanes spread over workers by stealing, while a task resumed by a
// worker still lands in that worker's next slot (the lane is usually idle, so schedule()
// puts it there): the request–reply path stays on one core.
// A lane runs up to `throughput` jobs per turn.

import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A task executor on an MNScheduler: `Task(executorPreference: scheduler.taskExecutor)`
/// or `withTaskExecutorPreference(scheduler.taskExecutor) { ... }` runs the task's
/// (nonisolated) code on the scheduler's workers. This is the fast way to call actors that
/// use an `MNSerialExecutor` of the same scheduler.
///
/// Thread-safety: `enqueue` from any thread. Lifetime: the executor may outlive its
/// Scheduler (a task retains its executor preference). It holds the scheduler's
/// SchedulerGate, not the Scheduler, so it never keeps the Scheduler alive and never reads
/// it after it was freed; jobs enqueued after the scheduler shut down (whether or not the
/// Scheduler is still referenced) run on Swift's global concurrent executor.
public final class MNTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `gate` and `lanes` are immutable; `outsideCursor` is atomic.

    final class Lane: ScheduledUnit, @unchecked Sendable {
        let jobs: MPSCQueue
        /// Set once by MNTaskExecutor.init; the executor owns its lanes. Unretained, and
        /// only runTurn reads it: a lane's turn runs only on a worker of a scheduler that
        /// has not finished shutdown, and that Scheduler holds the executor (lanes queued
        /// at shutdown are handed to the global executor, never run).
        var owner: Unmanaged<MNTaskExecutor>?

        override init() {
            do {
                jobs = try MPSCQueue(capacity: MNSerialExecutor.jobQueueCapacity)
            } catch {
                preconditionFailure("MNTaskExecutor: \(error)")
            }
            super.init()
        }

        override func runTurn(budget: Int) -> TurnOutcome {
            let executor = owner!._withUnsafeGuaranteedRef { $0.asUnownedTaskExecutor() }
            let outcome = jobs.drain(max: budget) { (raw: UnsafeMutableRawPointer) in
                unsafeBitCast(raw, to: UnownedJob.self).runSynchronously(on: executor)
            }
            return outcome == .empty ? .idle : .more
        }

        /// The scheduler has shut down: the lane's jobs move to Swift's global executor.
        override func runAfterShutdown() { MNTaskExecutor.handOffAfterShutdown(self) }
    }

    /// How lanes get scheduled, held strongly: it outlives the Scheduler as long as this
    /// executor does, and references neither (no cycle; see SchedulerGate).
    private let gate: SchedulerGate
    private let lanes: [Lane]
    /// Lane cursor for enqueues from outside the pool. Any thread, relaxed: only spreading.
    private let outsideCursor = Atomic<Int>(0)

    init(laneCount: Int, gate: SchedulerGate) {
        self.gate = gate
        lanes = (0..<max(laneCount, 1)).map { _ in Lane() }
        for lane in lanes { lane.owner = Unmanaged.passUnretained(self) }
    }

    /// Queues a task job on the next lane (any thread). After the scheduler shut down (even
    /// once the Scheduler itself was released), jobs go to Swift's global concurrent
    /// executor instead (see handOffAfterShutdown).
    public func enqueue(_ job: consuming ExecutorJob) {
        let raw = unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self)
        let index: Int
        if let worker = Worker.currentUnmanaged, worker._withUnsafeGuaranteedRef({ $0.schedulerID == gate.id }) {
            index = worker._withUnsafeGuaranteedRef { worker in
                worker.laneCursor &+= 1
                return worker.index &+ worker.laneCursor
            }
        } else {
            index = outsideCursor.wrappingAdd(1, ordering: .relaxed).oldValue
        }
        let lane = lanes[Int(UInt(bitPattern: index) % UInt(lanes.count))]  // cursors wrap
        switch lane.jobs.enqueue(raw) {
        case .accepted(becameNonEmpty: true):
            gate.schedule(lane)  // after shutdown: Lane.runAfterShutdown
        case .accepted(becameNonEmpty: false):
            break
        case .closed:
            fatalError("MNTaskExecutor: job enqueued on a closed lane")
        }
    }

    /// The scheduler has shut down, so no worker will ever run `lane` again. This caller got
    /// `becameNonEmpty`, which makes it the lane's only consumer until the lane is empty
    /// again: it moves every job to Swift's global concurrent executor, so a task that
    /// outlives its scheduler (a sequential actor cancelled at shutdown, say) finishes on
    /// Swift's default pool instead of hanging or trapping.
    static func handOffAfterShutdown(_ lane: Lane) {
        while lane.jobs.drain(max: Int.max, { (raw: UnsafeMutableRawPointer) in
            let job = unsafeBitCast(raw, to: UnownedJob.self)
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }) == .more {
            sched_yield()  // a producer is between claim and commit
        }
    }

    /// This executor for the runtime.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
