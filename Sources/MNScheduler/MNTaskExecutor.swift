// MNTaskExecutor — a TaskExecutor that runs Swift tasks on MNScheduler's workers.
//
// Algorithm: jobs of tasks are not serial, so one queue-and-unit would serialise them.
// Instead the executor has 4×W *lanes*; each lane is a ScheduledUnit with an MPSCQueue of
// jobs, exactly like MNSerialExecutor. A job goes to the next lane in round-robin order
// (a per-worker cursor on a worker, an atomic cursor from outside), so independent tasks
// spread over lanes and lanes spread over workers by stealing, while a task resumed by a
// worker still lands in that worker's next slot (the lane is usually idle, so schedule()
// puts it there): the request–reply path stays on one core. Round-robin from a worker
// skips the lane whose turn that worker is running: a job queued there would wait until
// the running job returns, in a lane no other worker can take meanwhile (a task that wakes
// another and then runs on — or blocks waiting for it — would hold it; before this rule
// one such wake in `lanes.count` did).
//
// The resume slot (hops): a task on the pool that awaits an actor leaves its job in the
// runtime's hands and comes back with an enqueue here; when that happens on the worker
// that is running the lane's turn, round-robin would cost a lane push, a schedule() and a
// second turn each way. Instead the lane keeps the job in `resumed` (one slot) and its turn
// runs it as soon as the job it is running (`runningJob`) returns, ahead of the lane's
// queue, like a worker's next slot. A job is a *hop* into the lane whose turn is on the
// calling worker when:
//   (H1) the worker is inside an inline run of an MNSerialExecutor (MNSerialExecutor.swift,
//        "The inline fast path") nested in a turn of one of this executor's lanes, and the
//        job is that lane's running job: the task coming back from the native actor;
//   (H2) the worker's current unit is one of this executor's lanes (in a job), the job is
//        not a task, and no task is current on this thread: the processing job a default
//        actor gets when the running task switches to it (with a task-executor preference
//        the runtime cannot run the actor on this thread; it clears the current task,
//        enqueues the task on the actor, and the idle actor's processing job comes to the
//        task's preferred executor, here). The running task is suspending, so its job
//        returns right after this enqueue. (A processing job re-enqueuing its own actor
//        also fits, and may run next just as well.)
//   (H3) the worker's current unit is one of this executor's lanes, its running job came
//        in as an H2 hop (so it is a default actor's processing job: the lane keeps that
//        as bit 0 of `runningWord`, as it must not read the job's header while it runs —
//        a processing job frees itself before it runs the actor's jobs), the job is a task
//        and no task is current: the task the actor ran switching back to its task
//        executor. It runs once the processing job returns (the runtime's actor loop may
//        first run the actor's other queued jobs, as it would have before the task's turn
//        came on another lane). A processing job that came through the queue instead is
//        not known as one, and its tasks go round-robin.
// "No task is current" (ckshim_current_task(), swift_task_getCurrent) is what makes H2 and
// H3 a *switch*: a running task that starts, resumes or wakes other work is still current,
// so that work goes round-robin and spreads.
// Not hops: a task enqueuing itself while it is the lane's running job (Task.yield: the
// running job came from the queue, so it goes to the back, round-robin), anything enqueued
// while a task is current, anything from off the pool or another scheduler. A job's kind
// is read from its header (JobFlags' kind byte, 4 words in; kind 0 is a task): Swift's
// ABI, checked against the SPI ExecutorJob.kind in debug builds.
// Cost (instruction-probe, callgrind, MN_WORKERS=1): `swiftactorpool`, a pool task's
// awaited call to a default actor, 4,153 → 3,507 instructions; the runtime's own floor for
// that call with a trampoline task executor is 3,288 (`swiftactorpoolfloor`).
// One slot: a second hop while it is taken (a default actor's processing job running the
// actor's queued jobs, a second task leaving it) goes round-robin like any other job, so
// tasks leaving one busy actor spread over lanes and workers.
// Bound: a lane runs at most `throughput` jobs per turn, queued and resumed alike
// (`runsLeft`); a hop once the budget is spent is pushed at the back of its lane's queue
// (mid-drain, so the push schedules nothing), and the turn then ends with `.more`: the lane
// goes to the back of the worker's local queue, where the worker's other units run before
// it and idle workers can steal it. So a task that calls actors forever gets at most
// `throughput` job runs (about throughput/2 calls) in a row; then the lane's tasks queued
// before it, and the worker's other runnable units (other lanes, actors), run before it
// runs again.
// Invariants: (L1) `resumed`, `runningJob` and `runsLeft` are touched only on the thread
// running the lane's turn (a hop is taken only by an enqueue from inside that turn: the
// worker's current unit is the lane, or an inline run nested in it), and turns of one
// lane are ordered by the scheduler (ScheduledUnit R2, acquire-release state-word CAS), so
// they need no atomics on x86 or ARM. (L2) `resumed` is only filled while `runsLeft` > 0,
// i.e. inside the turn's loop, and the loop runs it before it looks at the queue again or
// returns: a hop is never left behind (so nothing is lost at shutdown either — a turn in
// progress finishes). (L3) jobs of one task never run at once: the runtime enqueues a
// task only once it has let go of it, and a lane runs one job at a time. (L4) no FIFO is
// promised between jobs of different tasks (the lanes never did); a hop runs ahead of the
// lane's queue, bounded as above. (L5) the hop test's other reads need no ordering either:
// a job's kind byte is written when the runtime creates the job, before its first enqueue
// — the enqueued job's by this thread, the running job's before the lane's queue (MPSCQueue
// release/acquire) or this thread handed it over — and the current task is thread-local.
// The running job's header is never read (H3 uses the kind recorded at its enqueue, H1
// compares its address): a default actor's processing job frees itself while it runs.

@_spi(ExperimentalCustomExecutors) import _Concurrency
import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A task executor on an MNScheduler: `Task(executorPreference: scheduler.taskExecutor)`
/// or `withTaskExecutorPreference(scheduler.taskExecutor) { ... }` runs the task's
/// (nonisolated) code on the scheduler's workers. This is the fast way to call actors that
/// use an `MNSerialExecutor` of the same scheduler; awaited calls to default Swift actors
/// stay on the calling worker too (the file comment, "The resume slot").
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
        /// read only on the same thread, by enqueues made from inside that job (L1 in the
        /// file comment; turns of one lane are ordered by the scheduler).
        var runningJob: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: runningWord & ~1) }
        /// `runningJob`'s bits, with bit 0 set when it is known not to be a task (it came
        /// through `resumed` as an H2 hop: a default actor's processing job). Jobs are
        /// 16-aligned. The hop test must not read the running job itself, which may be gone
        /// while it still runs (a processing job frees itself before it runs the actor's
        /// jobs), so its kind travels with it, read when it was enqueued.
        @exclusivity(unchecked) var runningWord: UInt = 0
        /// A hop (H1–H3 in the file comment) taken while `runningJob` runs, nil when none:
        /// the turn runs it as soon as `runningJob` returns. Written by the hop's enqueue
        /// and read by the turn, both on the turn's thread (L1).
        var resumed: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: resumedWord & ~1) }
        /// `resumed`'s bits, bit 0 set when it is not a task (see `runningWord`); 0: none.
        @exclusivity(unchecked) var resumedWord: UInt = 0
        /// Jobs this turn may still run, queued and resumed alike; 0 outside a turn (L1, L2).
        @exclusivity(unchecked) var runsLeft = 0
        /// Test hook: jobs run from `resumed` (the hop path), counted on the turn's thread.
        /// Debug builds only (no cost in release); read by tests once the lane is quiet.
        #if DEBUG
        @exclusivity(unchecked) var resumedRuns = 0
        #endif

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
                outcome = jobs.drain(max: 1) { (raw: UnsafeMutableRawPointer) in run(raw, on: executor) }
                if outcome == .empty { break }
            }
            runningWord = 0
            runsLeft = 0  // L2: no hop is taken outside the loop
            return outcome == .empty ? .idle : .more
        }

        /// Runs `raw`, then each hop its run leaves in `resumed` (the turn's budget counts
        /// them all).
        @inline(__always)
        private func run(_ raw: UnsafeMutableRawPointer, on executor: UnownedTaskExecutor) {
            var word = UInt(bitPattern: raw)
            while true {
                runningWord = word
                runsLeft -= 1
                unsafeBitCast(word & ~1, to: UnownedJob.self).runSynchronously(on: executor)
                let next = resumedWord
                if next == 0 { return }
                resumedWord = 0
                word = next
                #if DEBUG
                resumedRuns += 1
                #endif
            }
        }

        /// Takes `raw`, a hop into this lane (H1–H3 in the file comment), into `resumed`
        /// while the turn's budget lasts; false (the caller pushes it at the back of the
        /// queue, behind the lane's other tasks) once it is spent.
        @inline(__always)
        func takeResumed(_ raw: UnsafeMutableRawPointer) -> Bool {
            guard runsLeft > 0, resumedWord == 0 else { return false }
            resumedWord = UInt(bitPattern: raw) | (MNTaskExecutor.isTask(raw) ? 0 : 1)
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
    let lanes: [Lane]
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
                let host = hopLane(raw, on: worker)
                if let host, host._withUnsafeGuaranteedRef({ $0.takeResumed(raw) }) { return }
                pushFromWorker(raw, worker, host: host)
            }
        } else {
            push(raw, to: outsideLane())
        }
    }

    /// A job from one of this scheduler's workers that no resume slot took: a hop whose
    /// lane `host` has spent its turn's budget goes to the back of that lane's queue (the
    /// file comment, "Bound"); anything else, and a hop that found the slot taken (a second
    /// task leaving a busy default actor's processing job), onto the next lane round-robin,
    /// so it can run on another worker.
    @inline(never)
    private func pushFromWorker(_ raw: UnsafeMutableRawPointer, _ worker: Worker, host: Unmanaged<Lane>?) {
        if let host, host._withUnsafeGuaranteedRef({ $0.resumed == nil }) {
            return host._withUnsafeGuaranteedRef { push(raw, to: $0) }
        }
        func nextLane() -> Lane {
            worker.laneCursor &+= 1
            return lanes[Int(UInt(bitPattern: worker.index &+ worker.laneCursor) % UInt(lanes.count))]  // cursors wrap
        }
        var lane = nextLane()
        if Unmanaged.passUnretained(lane).toOpaque() == worker.currentUnit, lanes.count > 1 {
            // The lane running on this worker: the job would wait behind the running job,
            // where no other worker can take it (the file comment). The next one instead.
            lane = nextLane()
        }
        push(raw, to: lane)
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

    /// The lane `raw` hops into (H1–H3 in the file comment), nil when it is no hop.
    @inline(__always)
    private func hopLane(_ raw: UnsafeMutableRawPointer, on worker: Worker) -> Unmanaged<Lane>? {
        guard let current = worker.currentUnit else { return nil }
        return Unmanaged<ScheduledUnit>.fromOpaque(current)._withUnsafeGuaranteedRef { unit -> Unmanaged<Lane>? in
            if let lane = Lane.ifLane(unit) {
                // H2 or H3: a default actor's processing job, or the task coming back from it.
                if MNTaskExecutor.isTask(raw) {
                    // H3: the running job is a processing job that came as an H2 hop (bit 0;
                    // first, as the cheapest test that turns away a task waking another).
                    guard lane.runningWord & 1 != 0 else { return nil }
                } else {
                    guard lane.runningWord != 0 else { return nil }  // H2
                }
                // ... on this executor, and the enqueue is a switch: the runtime has let go
                // of the task (none is current).
                guard lane.owner?.toOpaque() == Unmanaged.passUnretained(self).toOpaque(),
                      ckshim_current_task() == nil else { return nil }
                return Unmanaged.passUnretained(lane)
            }
            // H1: the task coming back from a native actor's inline run nested in a lane.
            guard let actor = MNSerialExecutor.ifSerialExecutor(unit), let host = actor.inlineHost else { return nil }
            return Unmanaged<ScheduledUnit>.fromOpaque(host)._withUnsafeGuaranteedRef { hostUnit -> Unmanaged<Lane>? in
                guard let lane = Lane.ifLane(hostUnit), lane.runningJob == raw,
                      lane.owner?.toOpaque() == Unmanaged.passUnretained(self).toOpaque() else { return nil }
                return Unmanaged.passUnretained(lane)
            }
        }
    }

    /// True when the job `raw` (UnownedJob bits) is a task: the kind byte of its JobFlags,
    /// 4 words into the job's header (HeapObject's 2 words, then SchedulerPrivate's 2), is
    /// 0 (`JobKind::Task`). Swift's runtime ABI; debug builds check it against the SPI
    /// `ExecutorJob.kind`.
    @inline(__always)
    static func isTask(_ raw: UnsafeMutableRawPointer) -> Bool {
        let isTask = raw.load(fromByteOffset: 4 * MemoryLayout<UInt>.size, as: UInt8.self) == 0
        #if DEBUG
        let job = ExecutorJob(unsafeBitCast(raw, to: UnownedJob.self))
        assert(isTask == (job.kind == .task), "MNTaskExecutor: the job header's kind byte is not where Swift 6.3 put it")
        #endif
        return isTask
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
