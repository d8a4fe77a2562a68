// Scheduler+Blocking: code that blocks its thread, on a pool sized to the cores.
//
// `blocking { … }` marks the worker stalled, moves its next slot and local queue to the
// injection queue and makes sure a thread runs them (a sleeper, else a spare), then runs
// the closure on the same thread, so its actor stays exclusive. Undeclared blocking is
// caught by BlockingMonitor. Spares (Worker.runSpare) have a run queue of the workers'
// capacity (a stolen half always fits), are not stolen from, and retire when idle.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Runs `body`, which may block its thread — file or socket I/O, a lock, `sleep`, a C
/// library call — without starving the other actors of its scheduler.
///
/// On a scheduler worker, the work queued behind the caller first moves to another thread
/// (a sleeping worker, or a spare thread, up to `MN_MAX_BLOCKING_THREADS`), so the pool
/// keeps its width while `body` blocks. `body` runs on the calling thread, inside the
/// turn, so the caller's actor stays exclusive. Elsewhere it simply runs `body`.
///
/// Cost: a few atomic operations and, when no worker sleeps, perhaps a thread start.
/// Don't wrap code that does not block.
@discardableResult
public func blocking<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    guard let worker = Worker.current else { return try body() }
    worker.beginBlocking()
    defer { worker.endBlocking() }
    return try body()
}

extension Worker {
    /// `blocking {}` on this worker's own thread.
    func beginBlocking() {
        shared.stalled.store(true, ordering: .releasing)
        core.blockingNow.wrappingAdd(1, ordering: .relaxed)
        var moved: [UnsafeMutableRawPointer] = []
        giveAwayQueued { moved.append($0) }
        if core.closed.load(ordering: .acquiring) {
            for unit in moved { core.handOver(unit) }  // shut down: the after-close path
            return
        }
        if !moved.isEmpty { core.injection.push(contentsOf: moved) }
        core.helpStalledWorkers(core.blockingNow.load(ordering: .relaxed))
    }

    func endBlocking() {
        core.blockingNow.wrappingSubtract(1, ordering: .relaxed)
        // `stalled` is cleared by this worker's next turn (runUnit).
    }
}

extension SchedulerCore {
    /// Stalled workers have work waiting: wake a sleeper, or start a spare.
    func helpStalledWorkers(_ stalled: Int) {
        if idle.snapshot.sleeping > 0 {
            notifyParked()
        } else if activeSpares.load(ordering: .relaxed) < stalled {
            startSpare()
        }
    }

    fileprivate final class SpareContext {
        let core: SchedulerCore
        let index: Int
        init(core: SchedulerCore, index: Int) { self.core = core; self.index = index }
    }

    /// Starts a spare thread unless at the cap or closed.
    func startSpare() {
        var running = activeSpares.load(ordering: .relaxed)
        while true {
            guard running < configuration.maxBlockingThreads, !closed.load(ordering: .acquiring) else { return }
            let (won, current) = activeSpares.compareExchange(expected: running, desired: running + 1, ordering: .acquiringAndReleasing)
            if won { break }
            running = current
        }
        let number = sparesStarted.wrappingAdd(1, ordering: .relaxed).oldValue
        let context = Unmanaged.passRetained(SpareContext(core: self, index: queues.count + number))
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, spareThreadMain, context.toOpaque())
        if rc == 0 {
            pthread_detach(thread)
        } else {
            context.release()
            activeSpares.wrappingSubtract(1, ordering: .releasing)
        }
    }

    /// A spare thread's life (takes the context's retain).
    fileprivate static func runSpareThread(_ raw: UnsafeMutableRawPointer) {
        let context = Unmanaged<SpareContext>.fromOpaque(raw).takeRetainedValue()
        let core = context.core
        let worker = Worker(index: context.index, schedulerID: core.schedulerID, core: core,
                            configuration: core.configuration, isSpare: true)
        let threshold = UInt64(core.configuration.blockingThresholdMilliseconds) * 1_000_000
        worker.runSpare(idleLimit: max(2 * threshold, 20_000_000))
        core.activeSpares.wrappingSubtract(1, ordering: .releasing)
    }
}

/// pthread entry point for a spare thread (a plain function: no captures).
private func spareThreadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    SchedulerCore.runSpareThread(raw!)
    return nil
}

/// What the scheduler did about blocking code (a snapshot; see ``Scheduler/blockingMetrics``).
public struct SchedulerBlockingMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Workers inside `blocking {}` now.
    public var workersInBlockingSections: Int
    /// Workers marked stalled inside a turn now: the monitor saw the turn run longer than
    /// the threshold, or a searching worker took a unit that waited in their next slot
    /// through the turn (SchedulerProtocols.md, "Long turns").
    public var workersStalled: Int
    /// Spare threads running now.
    public var spareThreadsRunning: Int
    /// Spare threads started since the scheduler began.
    public var spareThreadsStarted: Int
    /// The longest single turn the monitor has seen (a lower bound; zero if none passed
    /// the threshold).
    public var longestTurn: Duration

    public var description: String {
        "blocking sections \(workersInBlockingSections), stalled \(workersStalled), spares running \(spareThreadsRunning) (started \(spareThreadsStarted)), longest turn \(longestTurn)"
    }
}

extension Scheduler {
    /// Blocking and detection figures (any thread; a snapshot).
    public var blockingMetrics: SchedulerBlockingMetrics {
        SchedulerBlockingMetrics(
            workersInBlockingSections: core.blockingNow.load(ordering: .relaxed),
            workersStalled: core.shared.filter { $0.stalled.load(ordering: .relaxed) && $0.inTurn }.count,
            spareThreadsRunning: core.activeSpares.load(ordering: .relaxed),
            spareThreadsStarted: core.sparesStarted.load(ordering: .relaxed),
            longestTurn: .nanoseconds(Int64(clamping: core.longestTurnNanoseconds.load(ordering: .relaxed))))
    }
}
