// MNTaskExecutor — a TaskExecutor that runs Swift tasks on MNScheduler's workers.
//
// Algorithm: jobs of tasks are not serial, so one queue-and-unit would serialise them.
// Instead the executor has 4×W *lanes*; each lane is a ScheduledUnit with an MPSCQueue of
// jobs, exactly like MNSerialExecutor. A job goes to the next lane in round-robin order
// (a per-worker cursor on a worker, an atomic cursor from outside), so independent tasks
// spread over lanes and lanes spread over workers by stealing, while a task resumed by a
// worker still lands in that worker's next slot (the lane is usually idle, so schedule()
// puts it there): the request–reply path stays on one core.
// One exception to round-robin: a task coming back from an inline run of an
// MNSerialExecutor (MNSerialExecutor.swift, "The inline fast path") goes back to the lane
// whose turn that run is nested in, if that lane's running job is this very task. It does
// not enter the lane's queue: the lane keeps it in `resumed` (one slot, touched only on the
// turn's thread) and its turn runs it as soon as the inline run has unwound and the job it
// was nested in returned, ahead of the queue, like a worker's next slot.
// A lane runs up to `throughput` jobs per turn, queued and resumed alike; a task that hops
// back once the budget is spent is pushed at the back of the lane's queue (mid-drain, so
// the push schedules nothing), so a task that keeps calling actors gets at most a turn's
// worth of runs in a row, and the lane's tasks queued before it run before it runs again.

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

    /// Ring slots of a lane's job queue (one lane per worker, so a roomy ring costs little).
    static let laneQueueCapacity = 64

    final class Lane: ScheduledUnit, @unchecked Sendable {
        let jobs: MPSCQueue
        /// Set once by MNTaskExecutor.init; the executor owns its lanes. Unretained, and
        /// only runTurn reads it: a lane's turn runs only on a worker of a scheduler that
        /// has not finished shutdown, and that Scheduler holds the executor (lanes queued
        /// at shutdown are handed to the global executor, never run).
        var owner: Unmanaged<MNTaskExecutor>?
        /// The job this lane's turn is running, nil between turns. Written by the turn,
        /// read only on the same thread, by enqueues made from inside that job (the rule
        /// E3 of MNSerialExecutor.swift; turns of one lane are ordered by the scheduler).
        @exclusivity(unchecked) var runningJob: UnsafeMutableRawPointer?
        /// The task that hopped back here from an inline run nested in `runningJob` (the
        /// file comment), nil when none: the turn runs it as soon as `runningJob` returns.
        /// Written by that hop-back and read by the turn, both on the turn's thread (E3).
        @exclusivity(unchecked) var resumed: UnsafeMutableRawPointer?
        /// Jobs this turn may still run, queued and resumed alike (E3's confinement too).
        @exclusivity(unchecked) var runsLeft = 0

        override init() {
            do {
                jobs = try MPSCQueue(capacity: MNTaskExecutor.laneQueueCapacity)
            } catch {
                preconditionFailure("MNTaskExecutor: \(error)")
            }
            super.init()
        }

        override func runTurn(budget: Int) -> TurnOutcome {
            let executor = owner!._withUnsafeGuaranteedRef { $0.asUnownedTaskExecutor() }
            runsLeft = budget
            var outcome = MPSCQueue.DrainOutcome.more
            // One queued job at a time, each followed by the tasks it resumes: the budget
            // counts both.
            while runsLeft > 0 {
                outcome = jobs.drain(max: 1) { (raw: UnsafeMutableRawPointer) in
                    var job = raw
                    while true {
                        runningJob = job
                        runsLeft -= 1
                        unsafeBitCast(job, to: UnownedJob.self).runSynchronously(on: executor)
                        guard let next = resumed else { break }
                        resumed = nil
                        job = next
                    }
                }
                if outcome == .empty { break }
            }
            runningJob = nil
            return outcome == .empty ? .idle : .more
        }

        /// Takes `raw`, the task hopping back from an inline run nested in this lane's
        /// running job, into `resumed` while the turn's budget lasts; false (the caller
        /// pushes it at the back of the queue, behind the lane's other tasks) once it is
        /// spent.
        @inline(__always)
        func takeResumed(_ raw: UnsafeMutableRawPointer) -> Bool {
            guard runsLeft > 0, resumed == nil else { return false }
            resumed = raw
            return true
        }

        /// `unit` as a Lane, or nil (a class-pointer compare: the class is final).
        @inline(__always)
        static func ifLane(_ unit: ScheduledUnit) -> Lane? {
            ObjectIdentifier(type(of: unit)) == ObjectIdentifier(Lane.self) ? unsafeDowncast(unit, to: Lane.self) : nil
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
        if let worker = Worker.currentUnmanaged {
            // No lane is retained here: `lanes` holds them for the executor's life.
            worker._withUnsafeGuaranteedRef { worker in
                guard worker.schedulerID == gate.id else { return push(raw, to: outsideLane()) }
                if let host = hostLane(returning: raw, on: worker),
                   host._withUnsafeGuaranteedRef({ $0.takeResumed(raw) }) { return }
                pushFromWorker(raw, worker)
            }
        } else {
            push(raw, to: outsideLane())
        }
    }

    /// A job from one of this scheduler's workers that no resume slot took: back to its
    /// host lane (that lane's budget is spent), or onto the next lane round-robin.
    @inline(never)
    private func pushFromWorker(_ raw: UnsafeMutableRawPointer, _ worker: Worker) {
        if let host = hostLane(returning: raw, on: worker) {
            return host._withUnsafeGuaranteedRef { push(raw, to: $0) }
        }
        worker.laneCursor &+= 1
        push(raw, to: lanes[Int(UInt(bitPattern: worker.index &+ worker.laneCursor) % UInt(lanes.count))])  // cursors wrap
    }

    /// The next lane for an enqueue from outside the pool (relaxed: only spreading).
    @inline(__always)
    private func outsideLane() -> Lane {
        let index = outsideCursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return lanes[Int(UInt(bitPattern: index) % UInt(lanes.count))]
    }

    /// Queues `raw` on `lane`; the push that takes the lane from idle gets it scheduled.
    @inline(never)
    private func push(_ raw: UnsafeMutableRawPointer, to lane: Lane) {
        switch lane.jobs.enqueue(raw) {
        case .accepted(becameNonEmpty: true):
            gate.scheduleResumed(lane)  // from outside: the resumed queue; after shutdown: Lane.runAfterShutdown
        case .accepted(becameNonEmpty: false):
            break
        case .closed:
            fatalError("MNTaskExecutor: job enqueued on a closed lane")
        }
    }

    /// The lane an inline run on `worker` is nested in, when that lane belongs to this
    /// executor and is running `raw` (the task hopping back: see the file comment).
    @inline(__always)
    private func hostLane(returning raw: UnsafeMutableRawPointer, on worker: Worker) -> Unmanaged<Lane>? {
        guard let current = worker.currentUnit else { return nil }
        return Unmanaged<ScheduledUnit>.fromOpaque(current)._withUnsafeGuaranteedRef { unit -> Unmanaged<Lane>? in
            guard let actor = MNSerialExecutor.ifSerialExecutor(unit), let host = actor.inlineHost else { return nil }
            return Unmanaged<ScheduledUnit>.fromOpaque(host)._withUnsafeGuaranteedRef { hostUnit -> Unmanaged<Lane>? in
                guard let lane = Lane.ifLane(hostUnit), lane.runningJob == raw,
                      lane.owner?.toOpaque() == Unmanaged.passUnretained(self).toOpaque() else { return nil }
                return Unmanaged.passUnretained(lane)
            }
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
