// SchedulerCore — the state a scheduler shares with its workers: the shutdown flag, the
// injection queue, the local run queues, the parkers and the idle bookkeeping.
//
// Why a separate object: workers reach this state on every turn. Each worker holds the
// core strongly in a `let`, so accesses borrow it and never touch a shared reference
// count. The core references no worker or scheduler (no cycle).

import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// Shared by one Scheduler and its workers. Every member is thread-safe.
final class SchedulerCore: Sendable {
    /// Set once by shutdown() (seq_cst); read by schedule() and by every worker loop
    /// (acquire) to stop.
    let closed = Atomic<Bool>(false)
    let injection: InjectionQueue
    /// Tasks resumed or started from outside the pool (task executor lanes enqueued from
    /// another thread). Workers serve it every other tick (Worker, step 0), so a resumed
    /// task does not wait behind the injection queue.
    let resumed: InjectionQueue
    let idle: IdleWorkers
    /// Worker i's local run queue, the stealers' handle (count, stealHalf); worker i holds
    /// the owner's (RunQueue: push, pop).
    let queues: [RunQueue.Stealer]
    /// Worker i's parker.
    let parkers: [Parker]
    /// Worker i's next slot, turn count and stalled flag.
    let shared: [WorkerShared]
    /// The owning scheduler's id (spares' workers carry it).
    let schedulerID: Int
    /// The resolved configuration (spares are made from it).
    let configuration: ResolvedSchedulerConfiguration
    /// Spare threads running now, and ever started (see Scheduler+Blocking.swift).
    let activeSpares = Atomic<Int>(0)
    let sparesStarted = Atomic<Int>(0)
    /// Workers inside `blocking {}` now.
    let blockingNow = Atomic<Int>(0)
    /// The longest turn the monitor has seen running, in nanoseconds (a lower bound).
    let longestTurnNanoseconds = Atomic<UInt64>(0)
    /// Units no worker will run any more (Scheduler.swift, C3): collected
    /// until shutdown's hand-back, run through their after-shutdown hook from then on.
    let late = Lock<LateUnits>(LateUnits())
    /// Workers whose loop has ended and whose leftovers were handed over (release by the
    /// worker, acquire by shutdown).
    let exitedWorkers = Atomic<Int>(0)

    struct LateUnits {
        /// Set once by shutdown after it took everything queued; from then on late units
        /// are abandoned by whoever hands them over.
        var handBackDone = false
        /// Entries of scheduled units (each retained iff its unit has no owner, L1) waiting
        /// for the hand-back.
        var units: [UnsafeMutableRawPointer] = []
    }

    init(configuration: ResolvedSchedulerConfiguration, schedulerID: Int) {
        self.schedulerID = schedulerID
        let workers = configuration.workers
        queues = (0..<workers).map { _ in RunQueue.Stealer(capacity: configuration.runQueueCapacity) }
        parkers = (0..<workers).map { _ in Parker() }
        shared = (0..<workers).map { _ in WorkerShared() }
        self.configuration = configuration
        injection = InjectionQueue(capacity: configuration.runQueueCapacity * 4)
        resumed = InjectionQueue(capacity: configuration.runQueueCapacity)
        idle = IdleWorkers(workerCount: workers)
    }

    /// True while the monitor thread runs (it reads the run queues' counts).
    let monitorRunning = Atomic<Bool>(false)
    /// Set once the rings were freed after a clean shutdown (releaseRings).
    let ringsReleased = Atomic<Bool>(false)

    deinit {
        if !ringsReleased.load(ordering: .acquiring) { for queue in queues { queue.deallocate() } }
    }

    /// Frees the run queues' and injection queues' rings after a shutdown in which every
    /// worker and spare exited and the monitor stopped. No thread can touch them again:
    /// late work takes the after-close path, which uses no ring. So a shut-down scheduler
    /// that is still referenced stays small. Readers of counts check `ringsReleased` first.
    /// Idempotent.
    func releaseRings() {
        guard !ringsReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for queue in queues { queue.deallocate() }
        injection.releaseRing()
        resumed.releaseRing()
    }

    /// IdleWorkers W1: after publishing work, wake a sleeper if nobody is searching.
    @inline(__always)
    func notifyParked() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if let index = idle.workerToNotify() { parkers[index].unpark() }
    }

    /// W1 for work a running worker put in its *own* queues: that worker is awake and will
    /// run the work itself, so a missed wake-up only delays parallelism, never loses work.
    /// So no fence: a relaxed look first, the full protocol only when somebody seems to
    /// sleep and nobody searches.
    @inline(__always)
    func notifyParkedFromWorker() {
        if idle.notifyShouldWakeupHint() { notifyParked() }
    }

    /// An entry for a `scheduled` unit (retained iff it has no owner, L1) that no worker
    /// will run, because the scheduler is closed: kept for shutdown's hand-back, or, once
    /// that happened, run through its after-shutdown hook on the calling thread.
    func handOver(_ pointer: UnsafeMutableRawPointer) {
        let keep = late.withLock { late -> Bool in
            if late.handBackDone { return false }
            late.units.append(pointer)
            return true
        }
        if !keep { SchedulerCore.abandon(pointer) }
    }

    /// Runs an entry the caller owns (a `scheduled` unit) through `runAfterShutdown()`
    /// until no schedule() arrived meanwhile, then leaves it idle. Uses T3/T4/T5, so a
    /// concurrent schedule() makes the loop go round again (R3), and the entry's retain is
    /// settled as a worker settles it (L3).
    static func abandon(_ pointer: UnsafeMutableRawPointer) {
        let unit = Unmanaged<ScheduledUnit>.fromOpaque(pointer)
        let after = unit._withUnsafeGuaranteedRef { unit -> ScheduledUnit.AfterTurn in
            while true {
                let owner = unit.transitionToRunning()
                unit.runAfterShutdown()
                let after = unit.transitionAfterTurn(.idle, owner: owner)
                if after != .requeue { return after }
            }
        }
        if after == .idleRelease { unit.release() }
    }

    /// How many spare threads BlockingMonitor may start for workers stuck in one turn with
    /// work behind them: one per worker asleep in the kernel, and one per runnable one
    /// only while fewer threads are awake than the workers and usable CPUs. A runnable
    /// worker makes progress; a spare beside it would widen the pool. Sleepers are woken
    /// first either way.
    func spareBudget(asleep: Int, runnable: Int) -> Int {
        guard runnable > 0 else { return asleep }
        let awake = idle.snapshot.unparked + activeSpares.load(ordering: .relaxed)
        let width = min(configuration.workers, configuration.cpus.usableCPUs)
        return awake < width ? asleep + runnable : asleep
    }

    /// True when any queue a searcher looks at holds a unit (a snapshot).
    func hasQueuedWork() -> Bool {
        if !injection.isEmpty || !resumed.isEmpty { return true }
        for queue in queues where queue.count > 0 { return true }
        return false
    }
}
