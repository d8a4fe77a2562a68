// Scheduler: the M:N scheduler. W worker threads run many ScheduledUnits, one turn at a
// time; a unit holds a worker only while it has work. Parts, one file each: ScheduledUnit,
// UnitHeader, UnitKind, Worker, RunQueue, InjectionQueue, IdleWorkers, Parker,
// SchedulerConfiguration, CPUAvailability. The protocols: MNScheduler.docc/SchedulerProtocols.md.
//
// schedule(unit): T1 (or T2 on a running unit). From one of this scheduler's workers the
// entry goes to its next slot; from any other thread, to the injection queue, waking a
// sleeper if nobody searches (IdleWorkers W1).
//
// Shutdown and after close (the article, "Shutdown and after close"):
//   (C1) Once shutdown set `closed` and closed the injection queues, a push either is
//        refused or hands what it finds queued over itself (InjectionQueue J4): nothing
//        stays in a queue.
//   (C2) A turn in progress finishes; workers hand their queues over and exit. A worker
//        still in a turn at the timeout is detached, never joined, and reported.
//   (C3) Everything queued, and every unit scheduled after close, runs through its
//        runAfterShutdown() hook. No work is left in a queue no one reads.
// Lifetime: worker threads retain the scheduler until they exit. schedule()'s state lives
// in a SchedulerGate shared with the task executor, so a task that outlives its scheduler
// finds the gate closed and goes to Swift's global executor.

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// Source of Scheduler.id; relaxed: only uniqueness matters.
private let nextSchedulerID = Atomic<Int>(1)

/// What a worker thread is started with; retains the scheduler for the thread's life.
private final class WorkerThreadContext {
    let scheduler: Scheduler
    let index: Int
    init(scheduler: Scheduler, index: Int) {
        self.scheduler = scheduler
        self.index = index
    }
}

/// The part of a Scheduler that `schedule()` needs, shared with its MNTaskExecutor.
/// Immutable, so thread-safe.
final class SchedulerGate: Sendable {
    /// The scheduler's id.
    let id: Int
    let core: SchedulerCore

    /// A DeterministicScheduler's: schedule() hands every unit to it (outside path only).
    let deterministic: DeterministicEngine?

    init(id: Int, core: SchedulerCore, deterministic: DeterministicEngine? = nil) {
        self.id = id
        self.core = core
        self.deterministic = deterministic
    }

    /// Makes the unit at `unit` (its object's address, unretained) runnable: the one path
    /// every schedule takes. On an open worker of this scheduler, T1's guessed CAS and the
    /// push into the worker's next slot are inline; everything else is a tail call out of
    /// line.
    @inline(__always)
    static func schedule<Guess: OwnerGuess>(_ unit: UnsafeMutableRawPointer, guessing _: Guess.Type, id: Int,
                                            core: SchedulerCore, gate: () -> SchedulerGate) {
        if let worker = Worker.currentUnmanaged, worker._withUnsafeGuaranteedRef({ $0.schedulerID == id }),
           !core.closed.load(ordering: .acquiring) {
            let guess = Guess.expectsOwner ? UnitHeader.owner : UnitHeader.idle
            let seen = UnitHeader.at(unit).pointee.transitionToScheduledBlind(expectingOwner: Guess.expectsOwner)
            guard seen == guess else { return SchedulerGate.scheduleContended(unit, worker: worker, seen: seen) }
            // Won T1. O set: the owner's reference keeps the unit; clear: the entry holds one (L2).
            if !Guess.expectsOwner { _ = Unmanaged<AnyObject>.fromOpaque(unit).retain() }
            worker._withUnsafeGuaranteedRef { $0.scheduleLocal(unit) }
            return
        }
        if Guess.expectsOwner {
            SchedulerGate.scheduleOtherGuessingOwner(gate(), unit)
        } else {
            SchedulerGate.scheduleOtherGuessingNoOwner(gate(), unit)
        }
    }

    /// `schedule` for a unit without an owner.
    @inline(__always)
    func schedule(_ unit: UnsafeMutableRawPointer) {
        SchedulerGate.schedule(unit, guessing: GuessNoOwner.self, id: id, core: core) { self }
    }

    /// `schedule` after T1's guessed CAS read `seen`: the rest of T1/T2, then the push (L2).
    @inline(never)
    private static func scheduleContended(_ unit: UnsafeMutableRawPointer, worker: Unmanaged<Worker>, seen: UInt8) {
        switch UnitHeader.at(unit).pointee.transitionToScheduledSlow(seen) {
        case .none: return
        case .pushUnretained: break
        case .pushRetained: _ = Unmanaged<AnyObject>.fromOpaque(unit).retain()
        }
        worker._withUnsafeGuaranteedRef { $0.scheduleLocal(unit) }
    }

    /// `scheduleOther` for each guess: one out-of-line copy each, with the guess a constant
    /// in it (a generic one is merged into a single copy that takes the guess).
    @inline(never)
    private static func scheduleOtherGuessingOwner(_ gate: SchedulerGate, _ unit: UnsafeMutableRawPointer) {
        scheduleOther(gate, unit, expectingOwner: true)
    }

    @inline(never)
    private static func scheduleOtherGuessingNoOwner(_ gate: SchedulerGate, _ unit: UnsafeMutableRawPointer) {
        scheduleOther(gate, unit, expectingOwner: false)
    }

    /// `schedule` off an open worker of this scheduler: closed, deterministic, or outside.
    @inline(__always)
    private static func scheduleOther(_ gate: SchedulerGate, _ unit: UnsafeMutableRawPointer, expectingOwner: Bool) {
        if gate.core.closed.load(ordering: .acquiring), let worker = Worker.currentUnmanaged,
           worker._withUnsafeGuaranteedRef({ $0.schedulerID == gate.id }) {
            return gate.scheduleAfterClose(unit)  // one of this scheduler's workers, after close
        }
        if let deterministic = gate.deterministic { return deterministic.schedule(unit) }  // DeterministicScheduler
        // Borrowed: a retain per push would write the line every searching worker reads.
        Unmanaged.passUnretained(gate.core.injection)._withUnsafeGuaranteedRef {
            gate.scheduleFromOutside(unit, into: $0, expectingOwner: expectingOwner)
        }
    }

    /// `schedule` for a task executor's lane: from outside the pool the lane goes to
    /// `core.resumed`, served every other tick, not behind the injection queue.
    func scheduleResumed(_ unit: UnsafeMutableRawPointer) {
        if let worker = Worker.currentUnmanaged, worker._withUnsafeGuaranteedRef({ $0.schedulerID == id }) {
            return schedule(unit)  // on one of this pool's workers: as any schedule
        }
        if deterministic != nil { return schedule(unit) }
        scheduleFromOutside(unit, into: core.resumed, expectingOwner: false)
    }

    /// The outside-the-pool part of schedule(); keeps C1. A refused push hands its entry over.
    @inline(__always)
    private func scheduleFromOutside(_ unit: UnsafeMutableRawPointer, into queue: InjectionQueue, expectingOwner: Bool) {
        guard let entry = UnitHeader.at(unit).pointee.claimEntry(unit, expectingOwner: expectingOwner) else { return }
        if queue.pushUnlessClosed(entry) {
            core.notifyParked()  // its fence is the one InjectionQueue J4 asks for
            queue.settleAfterPush()
        } else {
            core.handOver(entry)
        }
    }

    /// schedule() once `closed` is set: C3.
    @inline(never)
    func scheduleAfterClose(_ unit: UnsafeMutableRawPointer) {
        guard let entry = UnitHeader.at(unit).pointee.claimEntry(unit, expectingOwner: false) else { return }
        core.handOver(entry)
    }
}

/// An M:N scheduler: `workerCount` OS threads running `ScheduledUnit` turns.
///
/// Thread-safety: every member may be used from any thread; `shutdown()` traps on one of
/// this scheduler's own workers. A unit runs at most `throughput` items per turn, never
/// concurrently with itself.
public final class Scheduler: Sendable {
    /// The effective configuration with the source of every value.
    public let resolvedConfiguration: ResolvedSchedulerConfiguration

    let id: Int
    let core: SchedulerCore
    let workers: [Worker]
    /// schedule()'s state, shared with `taskExecutor`.
    let gate: SchedulerGate

    /// Worker threads to join, and whether shutdown completed.
    private let lifecycle = Lock<(threads: [(worker: Int, thread: pthread_t)], finished: Bool)>(([], false))
    /// Workers 0..<donatedWorkers run on threads that call ``runDonatedWorker()``.
    public let donatedWorkers: Int
    /// Donated workers claimed so far.
    private let donationsClaimed = Atomic<Int>(0)

    /// Runs `Task`s on this scheduler's workers: pass it to `Task(executorPreference:)` or
    /// `withTaskExecutorPreference`. Awaited calls to actors on an `MNSerialExecutor` of the
    /// same scheduler then stay on the pool (the fast path, see MNSerialExecutor).
    public let taskExecutor: MNTaskExecutor

    /// Creates a scheduler and starts its workers.
    ///
    /// Values in `configuration` win over MN_* environment variables, which win over the
    /// defaults. Throws `SchedulerConfigurationError`, naming the variable, the value and
    /// the allowed range, for any malformed or out-of-range value. `donatedWorkers`
    /// workers get no thread; they run on threads that call ``runDonatedWorker()``.
    public init(configuration: SchedulerConfiguration = SchedulerConfiguration(),
                donatedWorkers: Int = 0) throws(SchedulerConfigurationError) {
        let resolved = try configuration.resolved()
        guard (0...resolved.workers).contains(donatedWorkers) else {
            throw SchedulerConfigurationError(variable: "Scheduler.init(donatedWorkers:)", value: String(donatedWorkers),
                                              allowed: "an integer in 0...\(resolved.workers) (the worker count)")
        }
        self.donatedWorkers = donatedWorkers
        self.resolvedConfiguration = resolved
        self.id = nextSchedulerID.wrappingAdd(1, ordering: .relaxed).oldValue
        let id = self.id
        let core = SchedulerCore(configuration: resolved, schedulerID: id)
        self.core = core
        self.workers = (0..<resolved.workers).map {
            Worker(index: $0, schedulerID: id, core: core, configuration: resolved)
        }
        let gate = SchedulerGate(id: id, core: core)
        self.gate = gate
        self.taskExecutor = MNTaskExecutor(laneCount: resolved.workers * 4, gate: gate)
        startThreads()
        BlockingMonitor.start(core: core)
    }

    /// A scheduler with no workers whose units run only when `engine` is driven.
    package init(deterministic engine: DeterministicEngine) {
        let resolved: ResolvedSchedulerConfiguration
        do {
            resolved = try SchedulerConfiguration(workers: 1, throughput: engine.throughput, spinCount: 0,
                                                  runQueueCapacity: 4, pinWorkers: false, readsEnvironment: false)
                .resolved(environment: [:], cpus: CPUAvailability.current())
        } catch {
            preconditionFailure("MNScheduler: deterministic configuration rejected: \(error)")  // values are in range
        }
        self.donatedWorkers = 0
        self.resolvedConfiguration = resolved
        self.id = nextSchedulerID.wrappingAdd(1, ordering: .relaxed).oldValue
        let core = SchedulerCore(configuration: resolved, schedulerID: id)
        self.core = core
        self.workers = []
        let gate = SchedulerGate(id: id, core: core, deterministic: engine)
        self.gate = gate
        self.taskExecutor = MNTaskExecutor(laneCount: 4, gate: gate)
    }

    private func startThreads() {
        var threads: [(worker: Int, thread: pthread_t)] = []
        for index in workers.indices.dropFirst(donatedWorkers) {
            let context = Unmanaged.passRetained(WorkerThreadContext(scheduler: self, index: index)).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { raw in
                let context = Unmanaged<WorkerThreadContext>.fromOpaque(raw!).takeRetainedValue()
                let scheduler = context.scheduler
                scheduler.workers[context.index].run(pin: scheduler.resolvedConfiguration.pinWorkers)
                return nil
            }, context)
            precondition(rc == 0, "MNScheduler: pthread_create failed for worker \(index) (errno \(rc))")
            threads.append((index, thread))
        }
        lifecycle.withLock { $0.threads = threads }
    }

    /// Runs one donated worker on the calling thread until the scheduler shuts down, then
    /// returns true; false at once when every donated worker is claimed. On Linux, call it
    /// from the main thread in place of `dispatchMain()`. Traps on one of this scheduler's
    /// own workers.
    @discardableResult
    public func runDonatedWorker() -> Bool {
        precondition(!isCurrentThreadWorker, "Scheduler.runDonatedWorker() called from one of its own workers")
        let index = donationsClaimed.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        guard index < donatedWorkers else { return false }
        workers[index].run(pin: false, nameThread: false)  // a donated thread keeps its affinity and name
        return true
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

    /// Makes `unit` runnable: an idle unit is queued, a scheduled one left alone, a running
    /// one queued again after its turn. From one of this scheduler's workers the unit goes
    /// to that worker's next slot; from outside, into the injection queue (a claim and a
    /// publish, waiting for no other caller; a short lock only once its ring is full), and
    /// a worker may be woken. After `shutdown` began, the unit goes to ``ScheduledUnit/runAfterShutdown()``
    /// instead, by `shutdown` or on the calling thread: never to a queue no one reads.
    ///
    /// `guessing` names the owner bit T1's first compare-and-swap expects: ``GuessOwner``
    /// for a unit that usually has an owner (a registered actor cell), so the common case
    /// stays one CAS. Any guess is correct.
    package func schedule<Guess: OwnerGuess>(_ unit: some ScheduledUnit, guessing: Guess.Type = GuessNoOwner.self) {
        SchedulerGate.schedule(unit.entry, guessing: guessing, id: id, core: core) { gate }
    }

    /// ``shutdown(timeout:)`` with no time limit: waits for every worker's current turn.
    @discardableResult
    public func shutdown() -> [any ScheduledUnit] { shutdown(timeout: nil) }

    /// Stops the workers and hands back what was queued. Lets each worker finish its
    /// current turn and exit, waiting at most `timeout` (nil: as long as it takes), then
    /// runs every unit still queued through ``ScheduledUnit/runAfterShutdown()`` and
    /// returns them.
    ///
    /// A worker still in a turn at the timeout is detached, not joined, and counted in
    /// ``workersStillRunning``; its unit goes to its hook when the turn ends. Task jobs move
    /// to Swift's global executor, serial executors' jobs to their fallback queue, so no
    /// call hangs. Idempotent: a second call returns []. Traps on one of this scheduler's
    /// own workers (it would wait for itself).
    @discardableResult
    public func shutdown(timeout: Duration?) -> [any ScheduledUnit] {
        precondition(!isCurrentThreadWorker,
                     "Scheduler.shutdown() called from one of its own worker threads: it would wait for itself")
        if let engine = gate.deterministic { return engine.shutdown(core: core) }  // DeterministicScheduler
        let deadline = timeout.map { $0.saturatingDeadline() } ?? .max
        let pointers: [UnsafeMutableRawPointer] = lifecycle.withLock { life in
            if life.finished { return [] }
            core.closed.store(true, ordering: .sequentiallyConsistent)
            // Unowned: the queues live in the core; a closure holding it would be a cycle.
            core.injection.close { [unowned core] in core.handOver($0) }
            core.resumed.close { [unowned core] in core.handOver($0) }
            for worker in workers { worker.parker.unpark() }
            while core.exitedWorkers.load(ordering: .acquiring) < workers.count
                    || core.activeSpares.load(ordering: .acquiring) > 0,
                  monotonicNanoseconds() < deadline {
                usleep(200)
            }
            for (index, thread) in life.threads {
                if workers[index].hasExited.load(ordering: .acquiring) {
                    pthread_join(thread, nil)
                } else {
                    pthread_detach(thread)  // inside a turn past the timeout: never joined
                }
            }
            life.threads = []
            life.finished = true
            var pointers: [UnsafeMutableRawPointer] = []
            // What a worker pushed before it left: into the late list, with the rest.
            core.resumed.drainAfterClose()
            core.injection.drainAfterClose()
            core.late.withLock { late in
                late.handBackDone = true
                pointers.append(contentsOf: late.units)
                late.units = []
            }
            return pointers
        }
        var handedBack: [any ScheduledUnit] = []
        handedBack.reserveCapacity(pointers.count)
        for pointer in pointers {
            // A strong reference first: the entry may hold none (L1).
            handedBack.append(UnitKind.unit(at: pointer))
            SchedulerCore.abandon(pointer)
        }
        // Nobody is left to touch the queues: free the rings.
        if workersStillRunning == 0 {
            let monitorDeadline = monotonicNanoseconds() + 1_000_000_000
            while core.monitorRunning.load(ordering: .acquiring), monotonicNanoseconds() < monitorDeadline { usleep(200) }
            if !core.monitorRunning.load(ordering: .acquiring) { core.releaseRings() }
        }
        OverflowChunkPool.ageAfterShutdown()  // pooled chunks go back to malloc later
        return handedBack
    }

    /// Workers that have not left their loop: 0 once a shutdown finished normally; after a
    /// shutdown that timed out, the workers still inside a turn (a snapshot).
    public var workersStillRunning: Int {
        workers.count - core.exitedWorkers.load(ordering: .acquiring) + core.activeSpares.load(ordering: .acquiring)
    }

    /// Searching / awake / sleeping worker counts (a snapshot, for tests and diagnostics).
    package var idleSnapshot: (searching: Int, unparked: Int, sleeping: Int) { core.idle.snapshot }
}

/// `Scheduler.shared`'s storage, initialised once on first use.
private let sharedScheduler: Scheduler = {
    do {
        return try Scheduler()
    } catch {
        fatalError("MNScheduler: cannot start Scheduler.shared: \(error)")
    }
}()

extension Scheduler {
    /// ``schedule(_:guessing:)`` guessing an owner, for the unit at `entry` (its object,
    /// unretained). Not generic, so code in other modules calls it specialised.
    @usableFromInline
    package func scheduleGuessingOwner(entry: UnsafeMutableRawPointer) {
        SchedulerGate.schedule(entry, guessing: GuessOwner.self, id: id, core: core) { gate }
    }
}

/// ``Scheduler/schedule(_:guessing:)`` guessing an owner, for the unit at `entry` (its
/// object, unretained), then true, so a reporting send's schedule is a tail call. Not
/// generic, so code in other modules calls it specialised. A free function: the caller's
/// self register (a cell) stays where it is.
@usableFromInline @inline(never)
package func scheduleOwnedAccepting(_ entry: UnsafeMutableRawPointer, on scheduler: Scheduler) -> Bool {
    SchedulerGate.schedule(entry, guessing: GuessOwner.self, id: scheduler.id, core: scheduler.core) { scheduler.gate }
    return true
}
