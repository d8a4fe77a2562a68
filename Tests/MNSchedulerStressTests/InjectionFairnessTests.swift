import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

// Fairness between the injection queue and a busy worker's local queue (Worker's file
// comment, step 1). With more always-runnable units than a local queue holds, some of them
// always wait in the injection queue; a unit scheduled from outside the pool waits there
// too. Every runnable unit should get a turn within a bounded number of other turns,
// roughly proportional to the number of runnable units. Turns are counted, not timed.

/// Turns run by every unit of one test (the pool's clock: one worker runs one turn at a
/// time), the largest gap a spinner saw between two of its turns, and the stop switch.
private final class TurnClock: Sendable {
    let turns = Atomic<Int>(0)
    let maxGap = Atomic<Int>(0)
    /// Gaps count only from this turn on (the start-up, while the test thread schedules the
    /// spinners, is not the steady state measured).
    let measureFrom = Atomic<Int>(Int.max)
    let stop = Atomic<Bool>(false)
}

/// Always runnable until told to stop: each turn ticks the clock, notes the gap since its
/// own previous turn, and asks to run again.
private final class GapSpinner: ScheduledUnit, @unchecked Sendable {
    fileprivate let unitHeader = UnitHeader(kind: GapSpinner.unitKind)
    static let unitKind = UnitKind.register(GapSpinner.self)
    let clock: TurnClock
    /// Only touched inside this unit's turns, which never overlap (R2).
    private var lastTurn = -1
    init(_ clock: TurnClock) {
        self.clock = clock
    }

    func runTurn(budget: Int) -> TurnOutcome {
        let now = clock.turns.wrappingAdd(1, ordering: .relaxed).newValue
        if lastTurn >= 0, lastTurn >= clock.measureFrom.load(ordering: .relaxed) {
            let gap = now - lastTurn
            if gap > clock.maxGap.load(ordering: .relaxed) { clock.maxGap.store(gap, ordering: .relaxed) }
        }
        lastTurn = now
        return clock.stop.load(ordering: .relaxed) ? .idle : .more
    }
    fileprivate func runAfterShutdown() {}
}

/// Runs once: records the clock at its turn.
private final class Probe: ScheduledUnit, @unchecked Sendable {
    fileprivate let unitHeader = UnitHeader(kind: Probe.unitKind)
    static let unitKind = UnitKind.register(Probe.self)
    let clock: TurnClock
    let ranAt = Atomic<Int>(-1)
    init(_ clock: TurnClock) {
        self.clock = clock
    }

    func runTurn(budget: Int) -> TurnOutcome {
        ranAt.store(clock.turns.wrappingAdd(1, ordering: .relaxed).newValue, ordering: .relaxed)
        return .idle
    }
    fileprivate func runAfterShutdown() {}
}

@Suite("Injection fairness", .serialized) struct InjectionFairnessTests {
    /// More than a local run queue holds (capacity 256: 255 entries), so about 150–270 of
    /// them always wait in the injection queue.
    static let spinners = 400
    /// The bound, in turns of other units, as a multiple of the runnable units. Served
    /// fairly (round robin over everything runnable) a unit waits about `spinners` turns;
    /// an overflow moves the local queue's older half (127 units that were next) to the
    /// injection queue's back, which can add up to a local queue's length on top: under
    /// 2 × 400. A unit left waiting for a periodic poll of the injection queue would wait
    /// thousands of turns.
    static let factor = 2
    /// A schedule call during which the worker ran more turns than this was preempted.
    static let tightCall = 16
    /// Probes sent before giving up on a schedule call that is not preempted.
    static let probeAttempts = 50

    @Test("a unit scheduled from outside, and every spinner, gets a turn within 2 × runnable units turns on a busy worker")
    func outsideUnitOnBusyWorker() throws {
        // No blocking detection, no spare threads: one thread runs every turn, so the turn
        // count is the pool's clock. (On this shared machine a worker preempted mid-turn
        // looks blocked; a spare then took half the local queue, and its units waited on
        // the OS while the worker ran 11,320 turns: the OS's fairness, not the queues'.)
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 1, throughput: 64, spinCount: 8, runQueueCapacity: 256, pinWorkers: false,
            blockingThresholdMilliseconds: 0, maxBlockingThreads: 0, readsEnvironment: false))
        let clock = TurnClock()
        let units = (0..<Self.spinners).map { _ in GapSpinner(clock) }
        for unit in units { scheduler.schedule(unit) }  // from outside: the injection queue
        // Steady state: every spinner has had several turns (overflow cycles included).
        #expect(waitUntil { clock.turns.load(ordering: .relaxed) >= 20 * Self.spinners })
        clock.measureFrom.store(clock.turns.load(ordering: .relaxed), ordering: .relaxed)

        // The probe's wait counts from a clock read just before its schedule call. The test
        // thread can be preempted inside that call while the worker runs on, which would
        // count the OS's delay as the queue's. So the clock is read after the call too, and
        // a probe whose call spanned more than a few turns is discarded and sent again.
        var probeWaited = Int.max
        var probesSent = 0
        for _ in 0..<Self.probeAttempts {
            probesSent += 1
            let probe = Probe(clock)
            let before = clock.turns.load(ordering: .relaxed)
            scheduler.schedule(probe)  // from outside, behind whatever the injection queue holds
            let after = clock.turns.load(ordering: .relaxed)
            #expect(waitUntil { probe.ranAt.load(ordering: .relaxed) >= 0 })
            if after - before <= Self.tightCall {
                probeWaited = probe.ranAt.load(ordering: .relaxed) - before
                break
            }
        }
        // Long enough for several overflow cycles of the local queue, and for a unit that
        // waits for a periodic poll of the injection queue to come round.
        let measureUntil = clock.measureFrom.load(ordering: .relaxed) + 150 * Self.spinners
        #expect(waitUntil(seconds: 60) { clock.turns.load(ordering: .relaxed) >= measureUntil })
        clock.stop.store(true, ordering: .relaxed)

        let maxGap = clock.maxGap.load(ordering: .relaxed)
        print("injection fairness: the outside unit waited \(probeWaited) turns (probe \(probesSent)); the largest gap between two turns of a spinner was \(maxGap) turns (\(Self.spinners) runnable, 1 worker, local capacity 256)")
        #expect(probeWaited <= Self.factor * Self.spinners, "the outside unit waited \(probeWaited) turns (Int.max: every schedule call was preempted)")
        #expect(maxGap <= Self.factor * Self.spinners, "a spinner waited \(maxGap) turns between two of its turns")
        _ = scheduler.shutdown()
    }
}
