// DeterministicScheduler — a scheduler for tests: no worker threads; the test's thread
// runs the turns one at a time, in an order chosen by a seeded generator, with virtual
// time. A failing seed replays the same interleaving.
//
// Parts: DeterministicEngine (the runnable units, the seeded choice, the drive guard; its
// file comment states the invariants D1–D5), VirtualClock (time and timers, V1–V4),
// SchedulerClock (the clock seam the runtime's timeouts read), SplitMix64 (the generator).
// The `scheduler` it exposes is an ordinary `Scheduler` whose gate forwards every
// schedule() to the engine, so everything built on Scheduler — actor systems,
// MNSerialExecutor, MNTaskExecutor — runs on it unchanged.

/// A scheduler for tests that runs every turn on the calling thread, one at a time, in an
/// order chosen by a seeded random generator, with virtual time.
///
/// Hand its ``scheduler`` to whatever you test (FastMailbox's
/// `ActorSystem(scheduler:)` takes a `DeterministicScheduler` directly), make things
/// runnable (tell an actor, start a task on `scheduler.taskExecutor`), then drive:
///
/// ```swift
/// let deterministic = DeterministicScheduler(seed: 42)
/// let executor = MNSerialExecutor(scheduler: deterministic.scheduler)
/// // ... enqueue work ...
/// let turns = try deterministic.runUntilQuiescent()
/// try deterministic.advanceTime(by: .seconds(5))   // timeouts due by then fire
/// ```
///
/// Guarantees:
/// - No threads: nothing runs until you call ``step()``, ``runUntilQuiescent(maxTurns:)``
///   or ``advanceTime(by:)``, and then it runs on the calling thread.
/// - One turn at a time, and a unit's turns never overlap.
/// - Replay: the next unit is chosen among the runnable ones by a SplitMix64 generator
///   seeded with ``seed``. When everything that schedules work runs on the driving thread
///   (your test code, the turns, the timer actions), the same seed runs the same turns in
///   the same order; print the seed when a test fails, and it replays exactly.
/// - Virtual time: the clock starts at zero and moves only in ``advanceTime(by:)``; the
///   timeouts the runtime keeps on this scheduler (ask timeouts, supervisor restart
///   windows, the actor system's shutdown deadline) read it.
/// - Shutdown: `scheduler.shutdown()` runs every unit still runnable through its
///   after-shutdown hook (an actor dead-letters its messages), like a real scheduler.
///
/// Thread-safety: work may be scheduled from any thread, but the scheduler must be driven
/// from one thread at a time, outside its own turns. A second concurrent drive, or a drive
/// from inside a turn or timer action, throws ``DeterministicSchedulerError/alreadyDriving(seed:)``
/// and runs nothing (never a trap or a deadlock). Work scheduled from other threads is
/// run safely but arrives at times the seed does not control, so such a run does not replay.
public final class DeterministicScheduler: Sendable {
    /// The seed that determines the order of turns.
    public let seed: UInt64
    /// The scheduler to run actors, executors and tasks on. It has no worker threads
    /// (`workerCount` is 0); its turns run only when this object is driven.
    public let scheduler: Scheduler

    let engine: DeterministicEngine

    /// Creates a deterministic scheduler.
    /// - Parameters:
    ///   - seed: determines the order of turns (see the type's Replay guarantee).
    ///   - throughput: items a unit handles per turn (an actor: messages). The default, 1,
    ///     interleaves actors at every message, which explores the most orders; values are
    ///     clamped to `SchedulerConfiguration.throughputRange`.
    public init(seed: UInt64, throughput: Int = 1) {
        let range = SchedulerConfiguration.throughputRange
        let engine = DeterministicEngine(seed: seed, throughput: min(max(throughput, range.lowerBound), range.upperBound))
        self.seed = seed
        self.engine = engine
        self.scheduler = Scheduler(deterministic: engine)
    }

    /// Runs one turn of a runnable unit chosen by the seeded generator.
    /// - Returns: false when nothing was runnable (nothing ran).
    /// - Throws: ``DeterministicSchedulerError/alreadyDriving(seed:)`` (see Thread-safety).
    @discardableResult
    public func step() throws(DeterministicSchedulerError) -> Bool {
        let previous = try engine.beginDrive()
        defer { engine.endDrive(previous) }
        return engine.runOneTurn()
    }

    /// Runs turns until nothing is runnable.
    ///
    /// Time does not move: a timeout that is due later stays pending (see
    /// ``advanceTime(by:)``).
    /// - Parameter maxTurns: the bound; a negative value means 0.
    /// - Returns: the number of turns run.
    /// - Throws: ``DeterministicSchedulerError/notQuiescent(turns:runnable:seed:)`` when
    ///   units were still runnable after `maxTurns` turns (they stay runnable: you may
    ///   drive on), or ``DeterministicSchedulerError/alreadyDriving(seed:)``.
    @discardableResult
    public func runUntilQuiescent(maxTurns: Int = 100_000) throws(DeterministicSchedulerError) -> Int {
        let previous = try engine.beginDrive()
        defer { engine.endDrive(previous) }
        let (turns, quiescent) = engine.runTurns(maxTurns: max(0, maxTurns))
        guard quiescent else { throw .notQuiescent(turns: turns, runnable: engine.runnableCount, seed: seed) }
        return turns
    }

    /// Moves virtual time forward by `duration`, firing every timer due by then in
    /// deadline order (each sees the clock at its own deadline). Runs no turns: work the
    /// timers make runnable (a timed-out ask's task, say) waits for the next
    /// ``step()`` or ``runUntilQuiescent(maxTurns:)``.
    /// - Parameter duration: any `Duration`; negative means zero. Time saturates: the clock
    ///   stops at its maximum, `UInt64.max` nanoseconds (about 584 years), and every
    ///   deadline computed from then on is that maximum too. A timer therefore always
    ///   fires: one due at or past the maximum fires in the advance that reaches it, and
    ///   one armed once the clock is there (an ask with a timeout, say) fires in the next
    ///   advance, even `advanceTime(by: .zero)` — its own duration cannot be represented
    ///   any more, so it ends early rather than never. (An ask whose timeout is itself
    ///   about 292 years or more has no timer at all: it means "no timeout".)
    /// - Returns: the number of timers fired.
    /// - Throws: ``DeterministicSchedulerError/alreadyDriving(seed:)``.
    @discardableResult
    public func advanceTime(by duration: Duration) throws(DeterministicSchedulerError) -> Int {
        let previous = try engine.beginDrive()
        defer { engine.endDrive(previous) }
        return engine.clock.advance(by: duration.saturatingNanoseconds)
    }

    /// ``scheduler``'s task executor: `Task(executorPreference: deterministic.taskExecutor)`
    /// runs the task's code when this scheduler is driven, on the driving thread (the way
    /// to `await` an actor's reply in a deterministic test).
    public var taskExecutor: MNTaskExecutor { scheduler.taskExecutor }

    /// Virtual time elapsed since this scheduler was created (at most `UInt64.max`
    /// nanoseconds: see ``advanceTime(by:)``).
    public var now: Duration {
        let nanoseconds = engine.clock.nanoseconds
        // Exact over the clock's whole range (`.nanoseconds(_:)` takes an Int64, half of it).
        return Duration(secondsComponent: Int64(nanoseconds / 1_000_000_000),
                        attosecondsComponent: Int64(nanoseconds % 1_000_000_000) * 1_000_000_000)
    }

    /// Units waiting for a turn (a snapshot).
    public var runnableCount: Int { engine.runnableCount }

    /// True when no unit is runnable (timers may still be pending).
    public var isQuiescent: Bool { engine.runnableCount == 0 }

    /// Turns run since creation.
    public var turnsRun: Int { engine.turns }

    /// Timers waiting for virtual time to reach their deadline.
    public var pendingTimerCount: Int { engine.clock.pendingTimers }
}
