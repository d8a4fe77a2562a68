// SchedulerCore: the state a scheduler shares with its workers: the shutdown flag, the
// injection queue, the local run queues, the parkers and the idle bookkeeping. Each
// worker holds it in a `let`, so accesses borrow it and never touch a shared reference
// count. It references no worker or scheduler (no cycle).

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
    /// Set once by shutdown() (seq_cst); schedule() and the worker loops read it to stop.
    let closed = Atomic<Bool>(false)
    let injection: InjectionQueue
    /// Tasks resumed from outside the pool; workers serve it every other tick (step 0).
    let resumed: InjectionQueue
    let idle: IdleWorkers
    /// Worker i's local run queue, the stealers' handle.
    let queues: [RunQueue.Stealer]
    /// Worker i's parker.
    let parkers: [Parker]
    /// Worker i's next slot, turn count and stalled flag.
    let shared: [WorkerShared]
    /// The owning scheduler's id (spares' workers carry it).
    let schedulerID: Int
    /// The resolved configuration (spares are made from it).
    let configuration: ResolvedSchedulerConfiguration
    /// Spare threads running now, and ever started.
    let activeSpares = Atomic<Int>(0)
    let sparesStarted = Atomic<Int>(0)
    /// Workers inside `blocking {}` now.
    let blockingNow = Atomic<Int>(0)
    /// The longest turn the monitor has seen running, in nanoseconds.
    let longestTurnNanoseconds = Atomic<UInt64>(0)
    /// Units no worker will run any more (C3): kept for shutdown's hand-back, then abandoned.
    let late = Lock<LateUnits>(LateUnits())
    /// Workers whose loop ended and whose leftovers were handed over.
    let exitedWorkers = Atomic<Int>(0)

    struct LateUnits {
        /// Set once shutdown took everything queued; late units are then abandoned at once.
        var handBackDone = false
        /// Entries of scheduled units (retained iff no owner, L1) waiting for the hand-back.
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

    /// True while the monitor thread runs.
    let monitorRunning = Atomic<Bool>(false)
    /// Set once the rings were freed.
    let ringsReleased = Atomic<Bool>(false)

    deinit {
        if !ringsReleased.load(ordering: .acquiring) { for queue in queues { queue.deallocate() } }
    }

    /// Frees the local run queues' rings once every worker and spare exited and the monitor
    /// stopped; late work takes the after-close path, which uses no local queue. Readers of
    /// their counts check `ringsReleased` first. The injection queues keep their rings until
    /// they are freed: an outside push that claimed before close may still publish
    /// (InjectionQueue J4). Idempotent.
    func releaseRings() {
        guard !ringsReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for queue in queues { queue.deallocate() }
    }

    /// IdleWorkers W1: after publishing work, wake a sleeper if nobody is searching.
    @inline(__always)
    func notifyParked() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if let index = idle.workerToNotify() { parkers[index].unpark() }
    }

    /// W1 for work a running worker put in its own queues: it runs the work itself, so a
    /// missed wake-up only delays parallelism. No fence: a relaxed look first.
    @inline(__always)
    func notifyParkedFromWorker() {
        if idle.notifyShouldWakeupHint() { notifyParked() }
    }

    /// An entry for a `scheduled` unit of a closed scheduler (C3): kept for the hand-back,
    /// or, once that happened, run through its after-shutdown hook here.
    func handOver(_ pointer: UnsafeMutableRawPointer) {
        let keep = late.withLock { late -> Bool in
            if late.handBackDone { return false }
            late.units.append(pointer)
            return true
        }
        if !keep { SchedulerCore.abandon(pointer) }
    }

    /// Runs an owned entry through `runAfterShutdown()` with T3/T4/T5, so a concurrent
    /// schedule() makes it go round again (R3) and the retain is settled as a worker's (L3).
    static func abandon(_ pointer: UnsafeMutableRawPointer) {
        let header = UnitHeader.at(pointer)
        while true {
            let owner = header.pointee.transitionToRunning()
            UnitKind.runAfterShutdown(pointer)
            let after = header.pointee.transitionAfterTurn(.idle, owner: owner)
            if after == .requeue { continue }
            if after == .idleRelease { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
            return
        }
    }

    /// How many spare threads BlockingMonitor may start: one per worker asleep in the kernel,
    /// and one per runnable one only while fewer threads are awake than workers and usable
    /// CPUs (a runnable worker makes progress). Sleepers are woken first either way.
    func spareBudget(asleep: Int, runnable: Int) -> Int {
        guard runnable > 0 else { return asleep }
        let awake = idle.snapshot.unparked + activeSpares.load(ordering: .relaxed)
        let width = min(configuration.workers, configuration.cpus.usableCPUs)
        return awake < width ? asleep + runnable : asleep
    }

    /// True when any queue a searcher looks at holds a unit it could take now (a snapshot;
    /// the parking re-check, IdleWorkers W2).
    func hasQueuedWork() -> Bool {
        if injection.hasReadyWork || resumed.hasReadyWork { return true }
        for queue in queues where queue.count > 0 { return true }
        return false
    }
}
