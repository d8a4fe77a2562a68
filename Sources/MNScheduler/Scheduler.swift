// Scheduler — the M:N scheduler: W worker threads running many ScheduledUnits, one turn
// at a time (Haller & Odersky's "Actors that Unify Threads and Events": a unit holds a
// worker only while it has work).
//
// Parts (one file each): ScheduledUnit (the state word and its transitions), Worker (the
// loop: next slot, local queue, injection polling every 61 ticks, stealing half, spinning,
// parking), RunQueue (per-worker ck_ring), InjectionQueue (shared ck_ring + ordered spill),
// IdleWorkers (searching/sleeping counts, who to wake), Parker (futex sleep),
// SchedulerConfiguration (knobs, environment, precedence), CPUAvailability (default W).
//
// schedule(unit):
//   1. T1 idle → scheduled (else: already scheduled → no-op; running → T2 notified, the
//      worker re-queues it after the turn).
//   2. From one of this scheduler's workers: that worker's next slot (the previous occupant
//      moves to its local queue, and a sleeper is woken to steal it). From any other
//      thread: the injection queue, then wake a sleeping worker if nobody is searching
//      (IdleWorkers W1).
// shutdown():
//   1. `closed` is set: schedule() throws .shutDown from then on (outside submitters that
//      passed the check first are waited for: SchedulerGate.outsideSubmitters is a
//      Dekker-style count).
//   2. Every worker is unparked; each finishes the turn it is in (a unit that asks to run
//      again is re-queued, not run) and exits; all threads are joined.
//   3. Everything still queued — next slots, local queues, injection queue — is handed
//      back to the caller, not run, each unit reset to idle. Later calls return [].
// Lifetime: each worker thread retains the scheduler until it exits, so a scheduler lives
// until shutdown() even if the program drops every reference. What schedule() needs (id,
// core, outside-submitter count) lives in a SchedulerGate, which the Scheduler and its
// MNTaskExecutor both hold strongly: a task may outlive its Scheduler (the runtime retains
// a task's executor preference), and its late jobs then find the gate closed and move to
// Swift's global executor. The gate references neither, so there is no cycle.

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Source of Scheduler.id (tells one scheduler's workers from another's). Any thread;
/// relaxed: only uniqueness matters, and the id is published with the scheduler itself.
private let nextSchedulerID = Atomic<Int>(1)

/// What a worker thread is started with (retains the scheduler for the thread's lifetime).
private final class WorkerThreadContext {
    let scheduler: Scheduler
    let index: Int
    init(scheduler: Scheduler, index: Int) {
        self.scheduler = scheduler
        self.index = index
    }
}

/// The part of a Scheduler that `schedule()` needs, shared with its MNTaskExecutor (see
/// the file comment's Lifetime). Thread-safe: `id` and `core` are immutable, the count is
/// atomic. References no Scheduler and no executor.
final class SchedulerGate: Sendable {
    /// The scheduler's id (tells its workers from other schedulers').
    let id: Int
    let core: SchedulerCore

    /// Outside (non-worker) schedule() calls between their `closed` check and their push.
    /// Incremented before the check, decremented after the push (seq_cst); shutdown() sets
    /// `closed` and then waits for 0, so no outside push lands after the hand-back.
    let outsideSubmitters = Atomic<Int>(0)

    init(id: Int, core: SchedulerCore) {
        self.id = id
        self.core = core
    }

    /// Scheduler.schedule(_:); see there.
    @inline(__always)
    func schedule(_ unit: ScheduledUnit) throws(SchedulerError) {
        if let worker = Worker.currentUnmanaged, worker._withUnsafeGuaranteedRef({ $0.schedulerID == id }) {
            // Worker pushes after `closed` are handed back by shutdown (it joins first).
            if core.closed.load(ordering: .relaxed) { throw .shutDown }
            guard unit.transitionToScheduled() else { return }
            let pointer = Unmanaged.passRetained(unit).toOpaque()
            worker._withUnsafeGuaranteedRef { $0.scheduleLocal(pointer) }
            return
        }
        outsideSubmitters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { outsideSubmitters.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        if core.closed.load(ordering: .sequentiallyConsistent) { throw .shutDown }
        guard unit.transitionToScheduled() else { return }
        core.injection.push(Unmanaged.passRetained(unit).toOpaque())
        core.notifyParked()
    }
}

/// An M:N scheduler: `workerCount` OS threads running `ScheduledUnit` turns.
///
/// Thread-safety: every member may be used from any thread, except that `shutdown()` must
/// not be called from one of this scheduler's own workers (it would join itself: that
/// traps with a message). Units are run at most `throughput` items per turn and never
/// concurrently with themselves.
public final class Scheduler: Sendable {
    /// The effective configuration with the source of every value.
    public let resolvedConfiguration: ResolvedSchedulerConfiguration

    let id: Int
    let core: SchedulerCore
    let workers: [Worker]
    /// schedule()'s state, shared with `taskExecutor` (see SchedulerGate).
    let gate: SchedulerGate

    /// Worker threads to join, and whether shutdown completed. Taken by shutdown() only.
    private let lifecycle = Lock<(threads: [pthread_t], finished: Bool)>(([], false))

    /// Runs `Task`s on this scheduler's workers: pass it to `Task(executorPreference:)` or
    /// `withTaskExecutorPreference`. Awaited calls to actors on an `MNSerialExecutor` of the
    /// same scheduler then stay on the pool (the fast path, see MNSerialExecutor).
    public let taskExecutor: MNTaskExecutor

    /// Creates a scheduler and starts its workers.
    ///
    /// Values set in `configuration` win over MN_* environment variables, which win over the
    /// defaults. Throws `SchedulerConfigurationError` naming the variable, the value and the
    /// allowed range when any value (code or environment) is malformed or out of range.
    public init(configuration: SchedulerConfiguration = SchedulerConfiguration()) throws(SchedulerConfigurationError) {
        let resolved = try configuration.resolved()
        self.resolvedConfiguration = resolved
        self.id = nextSchedulerID.wrappingAdd(1, ordering: .relaxed).oldValue
        let id = self.id
        let core = SchedulerCore(configuration: resolved)
        self.core = core
        self.workers = (0..<resolved.workers).map {
            Worker(index: $0, schedulerID: id, core: core, configuration: resolved)
        }
        let gate = SchedulerGate(id: id, core: core)
        self.gate = gate
        self.taskExecutor = MNTaskExecutor(laneCount: resolved.workers * 4, gate: gate)
        startThreads()
    }

    private func startThreads() {
        var threads: [pthread_t] = []
        for index in workers.indices {
            let context = Unmanaged.passRetained(WorkerThreadContext(scheduler: self, index: index)).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { raw in
                let context = Unmanaged<WorkerThreadContext>.fromOpaque(raw!).takeRetainedValue()
                let scheduler = context.scheduler
                scheduler.workers[context.index].run(pin: scheduler.resolvedConfiguration.pinWorkers)
                return nil
            }, context)
            precondition(rc == 0, "MNScheduler: pthread_create failed for worker \(index) (errno \(rc))")
            threads.append(thread)
        }
        lifecycle.withLock { $0.threads = threads }
    }

    /// The process-wide scheduler, created on first use from the environment (MN_*).
    /// Traps with the configuration error's message if the environment is invalid.
    /// It is never shut down implicitly.
    public static var shared: Scheduler { sharedScheduler }

    /// The effective values, every property set (see `resolvedConfiguration` for sources).
    public var configuration: SchedulerConfiguration { resolvedConfiguration.configuration }

    /// Number of worker threads.
    public var workerCount: Int { workers.count }

    /// True once `shutdown()` has begun.
    public var isShutDown: Bool { core.closed.load(ordering: .acquiring) }

    /// The calling thread's worker index (in its own scheduler), nil off-pool.
    public static var currentWorkerIndex: Int? { Worker.currentUnmanaged?._withUnsafeGuaranteedRef { $0.index } }

    /// True when the caller is one of *this* scheduler's workers.
    public var isCurrentThreadWorker: Bool {
        Worker.currentUnmanaged?._withUnsafeGuaranteedRef { $0.schedulerID == id } ?? false
    }

    /// Makes `unit` runnable: idle → scheduled and queued; already scheduled → no-op;
    /// running → marked notified and re-queued after its turn.
    /// From one of this scheduler's workers it goes to that worker's next slot (the previous
    /// occupant moves to the local queue); from outside, to the injection queue (waking a
    /// sleeping worker). From a worker it is lock-free (a CAS and a wait-free push); from
    /// outside it takes the injection queue's producer lock for a few stores (see
    /// InjectionQueue for why not ck's spinning multi-producer enqueue) and may wake a worker.
    /// Throws `.shutDown` once `shutdown()` has begun (the unit's state is left unchanged).
    public func schedule(_ unit: ScheduledUnit) throws(SchedulerError) {
        try gate.schedule(unit)
    }

    /// Idempotent. Stops accepting (schedule throws .shutDown), lets each worker finish its
    /// current turn, joins all workers and returns the units that were still queued (handed
    /// back, not run, reset to idle) so the owner can account for their work. Jobs of this
    /// scheduler's `taskExecutor` are not handed back: they, and task jobs enqueued later,
    /// move to Swift's global concurrent executor; queued jobs of an MNSerialExecutor run
    /// on its serial fallback queue; so no task or actor call hangs or traps. A second call
    /// returns []; concurrent calls wait for the first. Must not be called from one of this
    /// scheduler's workers (traps: it would join itself).
    @discardableResult
    public func shutdown() -> [ScheduledUnit] {
        precondition(!isCurrentThreadWorker,
                     "Scheduler.shutdown() called from one of its own worker threads: it would wait for itself")
        return lifecycle.withLock { life -> [ScheduledUnit] in
            if life.finished { return [] }
            core.closed.store(true, ordering: .sequentiallyConsistent)
            while gate.outsideSubmitters.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
            for worker in workers { worker.parker.unpark() }
            for thread in life.threads { pthread_join(thread, nil) }
            life.threads = []
            life.finished = true
            var pointers: [UnsafeMutableRawPointer] = []
            for worker in workers {
                if let unit = worker.nextSlot { pointers.append(unit) }
                worker.nextSlot = nil
                while let unit = worker.local.pop() { pointers.append(unit) }
            }
            while let unit = core.injection.pop() { pointers.append(unit) }
            var handedBack: [ScheduledUnit] = []
            for pointer in pointers {
                let unit = Unmanaged<ScheduledUnit>.fromOpaque(pointer).takeRetainedValue()
                unit.resetToIdle()
                if let lane = unit as? MNTaskExecutor.Lane {
                    // Task jobs must not be stranded: they move to Swift's global executor.
                    MNTaskExecutor.handOffAfterShutdown(lane)
                } else if let executor = unit as? MNSerialExecutor {
                    // Native-actor jobs run, in order, on the executor's fallback queue.
                    executor.drainAfterShutdown()
                } else {
                    handedBack.append(unit)
                }
            }
            return handedBack
        }
    }

    /// Searching / awake / sleeping worker counts (a snapshot, for tests and diagnostics).
    package var idleSnapshot: (searching: Int, unparked: Int, sleeping: Int) { core.idle.snapshot }
}

/// `Scheduler.shared`'s storage: a global is initialised once, thread-safely, on first use.
private let sharedScheduler: Scheduler = {
    do {
        return try Scheduler()
    } catch {
        fatalError("MNScheduler: cannot start Scheduler.shared: \(error)")
    }
}()
