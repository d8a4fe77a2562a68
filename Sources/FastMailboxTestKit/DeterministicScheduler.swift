// DeterministicScheduler — a scheduler for tests: no worker threads; the test's thread
// runs the turns one at a time, in an order chosen by a seeded generator, with virtual
// time. A failing seed replays the same interleaving.
//
// Parts: DeterministicEngine (the runnable units, the seeded choice, the drive guard; its
// file comment states the invariants D1–D5), VirtualClock (time and timers, V1–V4),
// SchedulerClock (the clock seam the runtime's timeouts read), SplitMix64 (the generator).
// The `scheduler` it exposes is an ordinary `Scheduler` whose gate forwards every
// schedule() to the engine, so everything built on Scheduler runs on it unchanged. The
// engine and the clock live in MNScheduler (package access: the scheduler needs them);
// this type is the public handle a test drives.

import MNScheduler

/// A scheduler for tests that runs every turn on the calling thread, one at a time, in an
/// order chosen by a seeded random generator, with virtual time.
///
/// Hand its ``scheduler`` to whatever you test (`ActorSystem(scheduler:)` takes a
/// `DeterministicScheduler` directly), make things runnable, then drive:
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
/// - Replay: the next unit is chosen among the runnable ones by a generator seeded with
///   ``seed``. When everything that schedules work runs on the driving thread, the same
///   seed runs the same turns in the same order.
/// - Virtual time: the clock starts at zero and moves only in ``advanceTime(by:)``; the
///   runtime's timeouts on this scheduler read it.
/// - Shutdown: `scheduler.shutdown()` runs every unit still runnable through its
///   after-shutdown hook (an actor dead-letters its messages), like a real scheduler.
///
/// Thread-safety: work may be scheduled from any thread; the scheduler is driven from one
/// thread at a time, outside its own turns. Another drive meanwhile throws
/// ``DeterministicSchedulerError/alreadyDriving(seed:)`` and runs nothing. Work scheduled
/// from other threads runs safely, but such a run does not replay.
public final class DeterministicScheduler: Sendable {
    /// The seed that determines the order of turns.
    public let seed: UInt64
    /// The scheduler to run actors, executors and tasks on. It has no worker threads
    /// (`workerCount` is 0); its turns run only when this object is driven.
    public let scheduler: Scheduler

    package let engine: DeterministicEngine

    /// Creates a deterministic scheduler.
    /// - Parameters:
    ///   - seed: determines the order of turns (see the type's Replay guarantee).
    ///   - throughput: items a unit handles per turn. The default, 1, interleaves at every
    ///     message, which explores the most orders; clamped to
    ///     `SchedulerConfiguration.throughputRange`.
    public init(seed: UInt64, throughput: Int = 1) {
        let range = SchedulerConfiguration.throughputRange
        let engine = DeterministicEngine(seed: seed, throughput: min(max(throughput, range.lowerBound), range.upperBound))
        self.seed = seed
        self.engine = engine
        self.scheduler = Scheduler(deterministic: engine)
    }

    /// A second handle on the deterministic scheduler that runs `scheduler` (a system's,
    /// for a TestProbe), nil when `scheduler` is a real one. Both handles drive one engine.
    init?(driving scheduler: Scheduler) {
        guard let engine = scheduler.deterministicEngine else { return nil }
        self.seed = engine.seed
        self.engine = engine
        self.scheduler = scheduler
    }

    /// Runs one turn of a runnable unit chosen by the seeded generator.
    /// - Returns: false when nothing was runnable (nothing ran).
    /// - Throws: ``DeterministicSchedulerError/alreadyDriving(seed:)`` (see Thread-safety).
    @discardableResult
    public func step() throws(DeterministicSchedulerError) -> Bool {
        let previous = try beginDrive()
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
        let previous = try beginDrive()
        defer { engine.endDrive(previous) }
        let (turns, quiescent) = engine.runTurns(maxTurns: max(0, maxTurns))
        guard quiescent else { throw .notQuiescent(turns: turns, runnable: engine.runnableCount, seed: seed) }
        return turns
    }

    /// Moves virtual time forward by `duration`, firing every timer due by then in
    /// deadline order (each sees the clock at its own deadline). Runs no turns: work the
    /// timers make runnable (a timed-out ask's task, say) waits for the next
    /// ``step()`` or ``runUntilQuiescent(maxTurns:)``.
    /// - Parameter duration: any `Duration`; negative means zero. Time saturates at
    ///   `UInt64.max` nanoseconds, and so does every deadline computed from then on. A
    ///   timer therefore always fires: one armed once the clock is there fires in the next
    ///   advance, even `advanceTime(by: .zero)`, early rather than never.
    /// - Returns: the number of timers fired.
    /// - Throws: ``DeterministicSchedulerError/alreadyDriving(seed:)``.
    @discardableResult
    public func advanceTime(by duration: Duration) throws(DeterministicSchedulerError) -> Int {
        let previous = try beginDrive()
        defer { engine.endDrive(previous) }
        return engine.clock.advance(by: duration.saturatingNanoseconds)
    }

    /// ``scheduler``'s task executor: a task with this preference runs when the scheduler
    /// is driven, on the driving thread.
    public var taskExecutor: MNTaskExecutor { scheduler.taskExecutor }

    /// Virtual time elapsed since this scheduler was created (at most `UInt64.max`
    /// nanoseconds: see ``advanceTime(by:)``).
    public var now: Duration { Self.duration(nanoseconds: engine.clock.nanoseconds) }

    /// Exact over the clock's whole range (`.nanoseconds(_:)` takes an Int64, half of it).
    private static func duration(nanoseconds: UInt64) -> Duration {
        Duration(secondsComponent: Int64(nanoseconds / 1_000_000_000),
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

    /// When the earliest pending timer is due (virtual time), nil when none is pending.
    var nextTimerDeadline: Duration? {
        engine.clock.nextDeadline.map { Self.duration(nanoseconds: $0) }
    }

    /// Takes the engine's drive guard, or names the seed of the scheduler already driven.
    private func beginDrive() throws(DeterministicSchedulerError) -> UnsafeMutableRawPointer? {
        do { return try engine.beginDrive() } catch { throw .alreadyDriving(seed: seed) }
    }
}
