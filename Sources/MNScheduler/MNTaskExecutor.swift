// MNTaskExecutor: a TaskExecutor that runs Swift tasks on MNScheduler's workers.
// The argument: MNScheduler.docc/Executors.md ("The task executor's lanes", "The
// resume slot", "The lanes' invariants").
//
// Several *lanes* per worker, each a ScheduledUnit with an MPSCQueue of jobs. A job goes
// to the next lane round-robin, skipping the calling worker's running lane. A *hop*
// enqueued from inside a lane's turn goes into its `resumed` slot and runs next:
//   (H1) the task coming back from an MNSerialExecutor's inline run nested in the lane;
//   (H2) a default actor's processing job the running task switched to;
//   (H3) the task switching back from that actor.
//
// Invariants:
//   (J1) `resumed`, `runningJob` and `runsLeft` are touched only by the lane's turn (R2).
//   (J2) `resumed` is filled only while `runsLeft` > 0, and run before the turn returns.
//   (J3) Jobs of one task never run at once.
//   (J4) No FIFO between jobs of different tasks; a hop runs ahead of its lane's queue.
//   (J5) The hop test never reads the running job's header (it may be freed).

@_spi(ExperimentalCustomExecutors) import _Concurrency
import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A task executor on an MNScheduler: `Task(executorPreference: scheduler.taskExecutor)`
/// runs the task's nonisolated code on the scheduler's workers. Awaited calls to actors on
/// an `MNSerialExecutor` of the same scheduler, and to default Swift actors, stay on the
/// calling worker.
///
/// Thread-safety: `enqueue` from any thread. The executor may outlive its Scheduler; it
/// never keeps it alive, and jobs enqueued after shutdown run on Swift's global executor.
public final class MNTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `gate` and `lanes` are immutable; `outsideCursor` is atomic.

    /// Ring slots of a lane's job queue.
    static let laneQueueCapacity = 64

    final class Lane: ScheduledUnit, @unchecked Sendable {
        /// The scheduler's state for this unit (first: UnitHeader.swift, H1).
        /// Its own turn is `runTurn`, called directly (UnitTurn.swift).
        let unitHeader = UnitHeader(kind: Lane.unitKind) { unit, budget, _ in
            unsafeDowncast(unit, to: Lane.self).runTurn(budget: budget)
        }
        /// This type's kind.
        static let unitKind = UnitKind.register(Lane.self)
        let jobs: MPSCQueue
        /// The owning executor, unretained: turns run only while the Scheduler holds it.
        var owner: Unmanaged<MNTaskExecutor>?
        /// The job this lane's turn is running, nil between turns (J1).
        var runningJob: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: runningWord & ~1) }
        /// `runningJob`'s bits, bit 0 set for an H2 hop: its kind, kept because the job may be
        /// freed (J5).
        @exclusivity(unchecked) var runningWord: UInt = 0
        /// A hop taken while `runningJob` runs; the turn runs it next (J1).
        var resumed: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: resumedWord & ~1) }
        /// `resumed`'s bits, as `runningWord`; 0: none.
        @exclusivity(unchecked) var resumedWord: UInt = 0
        /// Jobs this turn may still run, queued and resumed alike (J1, J2).
        @exclusivity(unchecked) var runsLeft = 0
        /// Debug builds only: jobs run from `resumed`, for tests.
        #if DEBUG
        @exclusivity(unchecked) var resumedRuns = 0
        #endif

        init() {
            do {
                jobs = try MPSCQueue(capacity: MNTaskExecutor.laneQueueCapacity)
            } catch {
                preconditionFailure("MNTaskExecutor: \(error)")
            }
        }

        /// Inlined into the unit's own turn.
        @inline(__always)
        func runTurn(budget: Int) -> TurnOutcome {
            let executor = owner!._withUnsafeGuaranteedRef { $0.asUnownedTaskExecutor() }
            runsLeft = budget
            var outcome = MPSCQueue.DrainOutcome.more
            // One queued job at a time, then the hops it leaves: the budget counts both.
            while runsLeft > 0 {
                outcome = jobs.drain(max: 1) { (raw: UnsafeMutableRawPointer) in run(raw, on: executor) }
                if outcome == .empty { break }
            }
            runningWord = 0
            runsLeft = 0  // J2: no hop is taken outside the loop
            return outcome == .empty ? .idle : .more
        }

        /// Runs `raw`, then each hop its run leaves in `resumed`, within the budget.
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

        /// Takes the hop into `resumed` while the budget lasts; false once it is spent.
        @inline(__always)
        func takeResumed(_ raw: UnsafeMutableRawPointer) -> Bool {
            guard runsLeft > 0, resumedWord == 0 else { return false }
            resumedWord = UInt(bitPattern: raw) | (MNTaskExecutor.isTask(raw) ? 0 : 1)
            return true
        }

        /// The unit at `entry` as a Lane, or nil (a kind compare).
        @inline(__always)
        static func ifLane(_ entry: UnsafeMutableRawPointer) -> Unmanaged<Lane>? {
            UnitHeader.at(entry).pointee.kind == unitKind ? Unmanaged<Lane>.fromOpaque(entry) : nil
        }

        /// The scheduler has shut down: the lane's jobs move to Swift's global executor.
        func runAfterShutdown() { MNTaskExecutor.handOffAfterShutdown(self) }
    }

    /// How lanes get scheduled; references neither (no cycle).
    private let gate: SchedulerGate
    let lanes: [Lane]
    /// Lane cursor for outside enqueues (relaxed: only spreading).
    private let outsideCursor = Atomic<Int>(0)

    init(laneCount: Int, gate: SchedulerGate) {
        self.gate = gate
        lanes = (0..<max(laneCount, 1)).map { _ in Lane() }
        for lane in lanes { lane.owner = Unmanaged.passUnretained(self) }
    }

    /// Queues a task job on the next lane, from any thread. After shutdown, jobs go to
    /// Swift's global concurrent executor (handOffAfterShutdown).
    public func enqueue(_ job: consuming ExecutorJob) {
        let raw = unsafeBitCast(UnownedJob(job), to: UnsafeMutableRawPointer.self)
        if let worker = Worker.currentUnmanaged {
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

    /// A worker's job no resume slot took: a spent lane's hop goes to its queue's back;
    /// anything else round-robin, to run on another worker.
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
            // Not the lane running here: the job would wait where no other worker can take it.
            lane = nextLane()
        }
        push(raw, to: lane)
    }

    /// The next lane for an outside enqueue.
    @inline(__always)
    private func outsideLane() -> Lane {
        let index = outsideCursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return lanes[Int(UInt(bitPattern: index) % UInt(lanes.count))]
    }

    /// Queues `raw` on `lane`, scheduling it from idle.
    @inline(never)
    private func push(_ raw: UnsafeMutableRawPointer, to lane: Lane) {
        switch lane.jobs.enqueue(raw) {
        case .accepted(becameNonEmpty: true):
            gate.scheduleResumed(lane.entry)  // from outside: the resumed queue; after shutdown: Lane.runAfterShutdown
        case .accepted(becameNonEmpty: false):
            break
        case .closed:
            fatalError("MNTaskExecutor: job enqueued on a closed lane")
        }
    }

    /// The lane `raw` hops into (H1–H3), nil when it is no hop.
    @inline(__always)
    private func hopLane(_ raw: UnsafeMutableRawPointer, on worker: Worker) -> Unmanaged<Lane>? {
        guard let current = worker.currentUnit else { return nil }
        if let laneRef = Lane.ifLane(current) {
            return laneRef._withUnsafeGuaranteedRef { lane -> Unmanaged<Lane>? in
                // H2 or H3: a default actor's processing job, or the task coming back from it.
                if MNTaskExecutor.isTask(raw) {
                    // H3 first: the cheapest test that turns away a task waking another.
                    guard lane.runningWord & 1 != 0 else { return nil }
                } else {
                    guard lane.runningWord != 0 else { return nil }  // H2
                }
                // ... a switch: the runtime has let go of the task.
                guard lane.owner?.toOpaque() == Unmanaged.passUnretained(self).toOpaque(),
                      ckshim_current_task() == nil else { return nil }
                return Unmanaged.passUnretained(lane)
            }
        }
        // H1: the task coming back from a native actor's inline run nested in a lane.
        guard let actor = MNSerialExecutor.ifSerialExecutor(current),
              let host = actor._withUnsafeGuaranteedRef({ $0.inlineHost }),
              let laneRef = Lane.ifLane(host) else { return nil }
        return laneRef._withUnsafeGuaranteedRef { lane -> Unmanaged<Lane>? in
            guard lane.runningJob == raw,
                  lane.owner?.toOpaque() == Unmanaged.passUnretained(self).toOpaque() else { return nil }
            return Unmanaged.passUnretained(lane)
        }
    }

    /// True when `raw` is a task: its JobFlags kind byte is 0 (Swift's runtime ABI; debug
    /// builds check it against `ExecutorJob.kind`).
    @inline(__always)
    static func isTask(_ raw: UnsafeMutableRawPointer) -> Bool {
        let isTask = raw.load(fromByteOffset: 4 * MemoryLayout<UInt>.size, as: UInt8.self) == 0
        #if DEBUG
        let job = ExecutorJob(unsafeBitCast(raw, to: UnownedJob.self))
        assert(isTask == (job.kind == .task), "MNTaskExecutor: the job header's kind byte is not where Swift 6.3 put it")
        #endif
        return isTask
    }

    /// After shutdown: the caller got `becameNonEmpty`, so it is the lane's only consumer; it
    /// moves every job to Swift's global executor.
    static func handOffAfterShutdown(_ lane: Lane) {
        while lane.jobs.drain(max: Int.max, { (raw: UnsafeMutableRawPointer) in
            let job = unsafeBitCast(raw, to: UnownedJob.self)
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }) == .more {
            sched_yield()  // a producer is between claim and publish
        }
    }

    /// This executor for the runtime.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
