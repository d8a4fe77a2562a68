import Testing
import Foundation
import Synchronization
import CConcurrencyKit
@testable import MNScheduler
import TestSupport

/// The rules that keep 2 workers from being slower than 1: spare threads
/// only where a CPU is free or a worker sleeps in the kernel. No timing assertions: every
/// wait is for a state, with a generous bound. The tests read which threads are runnable
/// and fill every CPU with spinning turns, so they run alone, in the stress target.
@Suite("Worker scaling rules", .serialized) struct WorkerScalingTests {
    /// A scheduler core with `workers` workers on a machine of `cpus` CPUs, no threads.
    private func core(workers: Int, cpus: Int) throws -> SchedulerCore {
        let resolved = try SchedulerConfiguration(workers: workers, readsEnvironment: false)
            .resolved(environment: [:], cpus: CPUAvailability(affinityCPUs: cpus, cgroupQuotaCPUs: nil, onlineCPUs: cpus))
        return SchedulerCore(configuration: resolved, schedulerID: -1)
    }

    @Test("a runnable stuck worker gets a spare only while fewer threads are awake than the pool's width (workers, at most the CPUs); an asleep one always")
    func spareBudgetFollowsThePoolsWidth() throws {
        // Every worker of a fresh core counts as awake (unparked), none as a spare.
        let full = try core(workers: 2, cpus: 2)
        #expect(full.spareBudget(asleep: 0, runnable: 1) == 0)  // both CPUs have a worker: a spare would time-slice
        #expect(full.spareBudget(asleep: 1, runnable: 1) == 1)  // the blocked one left its CPU
        #expect(full.spareBudget(asleep: 2, runnable: 0) == 2)
        // One worker on two CPUs: a free CPU is not the pool's to take. A runnable worker
        // gets no spare (one worker would run two threads' work), a blocked one does.
        let narrow = try core(workers: 1, cpus: 2)
        #expect(narrow.spareBudget(asleep: 0, runnable: 1) == 0)
        #expect(narrow.spareBudget(asleep: 1, runnable: 0) == 1)
        // Two workers, one of them parked (idle): the width has room for one more thread.
        let parked = try core(workers: 2, cpus: 2)
        _ = parked.idle.transitionToParked(worker: 1, isSearching: false)
        #expect(parked.spareBudget(asleep: 0, runnable: 1) == 1)
    }

    /// Whether the platform layer can tell a runnable thread from a sleeping one (Linux's
    /// /proc can; the portable layer cannot, and then every stalled worker counts as asleep).
    static let threadStateKnown = ckplat_thread_is_runnable(ckplat_thread_id()) != -1

    @Test("a worker spinning inside a turn reads as runnable, one waiting on a semaphore as asleep",
          .enabled(if: threadStateKnown, "the platform layer cannot read a thread's state"))
    func threadStateIsRead() throws {
        let scheduler = try makeScheduler(workers: 1)
        let shared = scheduler.core.shared[0]
        let stop = Atomic<Bool>(false)
        let spinning = Atomic<Bool>(false)
        let spinner = ClosureUnit { _, _ in
            spinning.store(true, ordering: .sequentiallyConsistent)
            while !stop.load(ordering: .relaxed) {}
            return .idle
        }
        scheduler.schedule(spinner)
        #expect(waitUntil { spinning.load(ordering: .sequentiallyConsistent) })
        #expect(waitUntil { shared.threadIsRunnable() })  // R while it spins (preempted or not)
        stop.store(true, ordering: .relaxed)

        let release = DispatchSemaphore(value: 0)
        let waiting = Atomic<Bool>(false)
        let sleeper = ClosureUnit { _, _ in
            waiting.store(true, ordering: .sequentiallyConsistent)
            release.wait()
            return .idle
        }
        scheduler.schedule(sleeper)
        #expect(waitUntil { waiting.load(ordering: .sequentiallyConsistent) })
        #expect(waitUntil { !shared.threadIsRunnable() })  // S once it sleeps in the futex
        release.signal()
        #expect(waitUntil { sleeper.runs.load(ordering: .sequentiallyConsistent) == 1 })
        scheduler.shutdown()
    }

    @Test("workers filling every CPU with long computing turns get no spare for the work queued behind them",
          .enabled(if: threadStateKnown, "the platform layer cannot read a thread's state"))
    func noSpareWhenEveryCPUHasAWorker() throws {
        let cpus = CPUAvailability.current().usableCPUs
        guard cpus <= 8 else { return }  // one spinning worker per CPU: keep it to small machines
        let scheduler = try makeScheduler(workers: cpus)
        let stop = Atomic<Bool>(false)
        let inside = Atomic<Int>(0)
        let spinners = (0..<cpus).map { _ in
            ClosureUnit { _, _ in
                inside.wrappingAdd(1, ordering: .sequentiallyConsistent)
                while !stop.load(ordering: .relaxed) {}
                return .idle
            }
        }
        for unit in spinners { scheduler.schedule(unit) }
        #expect(waitUntil { inside.load(ordering: .sequentiallyConsistent) == cpus })
        let queued = ClosureUnit()
        scheduler.schedule(queued)  // waits in the injection queue behind the long turns
        #expect(waitUntil { scheduler.blockingMetrics.workersStalled == cpus })
        // Two more monitor ticks: the tick that marked the last worker stalled has decided.
        let samples = scheduler.core.shared[0].samples.load(ordering: .relaxed)
        #expect(waitUntil { scheduler.core.shared[0].samples.load(ordering: .relaxed) >= samples + 2 })
        #expect(scheduler.blockingMetrics.spareThreadsStarted == 0, "\(scheduler.blockingMetrics)")
        #expect(queued.runs.load(ordering: .sequentiallyConsistent) == 0)
        stop.store(true, ordering: .relaxed)
        #expect(waitUntil { queued.runs.load(ordering: .sequentiallyConsistent) == 1 })  // no lost work
        scheduler.shutdown()
    }

    @Test("a unit scheduled into a stalled worker's next slot wakes a sleeping worker to run it during the long turn")
    func stalledNextSlotWakesASleeper() throws {
        // Detection off: the test plays the monitor (sets `stalled`), so only schedule()'s own
        // wake-up can get the unit run before the long turn ends.
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 2, spinCount: 8, blockingThresholdMilliseconds: 0, readsEnvironment: false))
        let duringTurn = toldUnitRunsDuringLongTurn(scheduler) {
            guard let index = Scheduler.currentWorkerIndex else { return }
            scheduler.core.shared[index].stalled.store(true, ordering: .releasing)
            _ = waitUntil { scheduler.idleSnapshot.sleeping == 1 }  // the other worker parked
        }
        #expect(duringTurn, "the told unit waited for the long turn to end")
        scheduler.shutdown()
    }

    /// Runs one long turn that tells a unit (into its own next slot, after `beforeTelling`)
    /// and then waits, bounded, for that unit to run; returns whether it ran while the
    /// turn was still going.
    func toldUnitRunsDuringLongTurn(_ scheduler: Scheduler,
                                    beforeTelling: @escaping @Sendable () -> Void = {}) -> Bool {
        let turnOver = Atomic<Bool>(false)
        let ranDuringTurn = Atomic<Bool>(false)
        // Set after `ranDuringTurn` is: `runs` counts a turn before its body runs, so waiting
        // on `runs` would let the long turn end between the count and the body's read.
        let observed = Atomic<Bool>(false)
        let told = ClosureUnit { _, _ in
            ranDuringTurn.store(!turnOver.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            observed.store(true, ordering: .sequentiallyConsistent)
            return .idle
        }
        let long = ClosureUnit { _, _ in
            beforeTelling()
            scheduler.schedule(told)  // into this worker's next slot, behind this long turn
            _ = waitUntil(seconds: 10) { observed.load(ordering: .sequentiallyConsistent) }
            turnOver.store(true, ordering: .sequentiallyConsistent)
            return .idle
        }
        scheduler.schedule(long)
        #expect(waitUntil(seconds: 60) { observed.load(ordering: .sequentiallyConsistent) })
        #expect(waitUntil(seconds: 60) { turnOver.load(ordering: .sequentiallyConsistent) })
        return ranDuringTurn.load(ordering: .sequentiallyConsistent)
    }

    @Test("a unit taken from a long turn's next slot drains without lingering until it goes idle; the thief lingers again after")
    func unitTakenFromLongTurnDoesNotLinger() throws {
        // As longTurnNextSlotIsTaken: the other worker takes `told` from this long turn's
        // next slot. `told` records whether its drains could linger (the permit its worker
        // gives the turn, LingerPermit.swift) in its first turn, in a second one (it asks
        // for one: its re-queue runs on the thief, from its local queue) and, after it went
        // idle, `later`'s turn on that same thread. Reverted, told's turns linger (2
        // workers) and chase the long turn's sends one at a time (Worker.swift, "Long turns").
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 2, spinCount: 1_000_000, blockingThresholdMilliseconds: 0, readsEnvironment: false))
        let lingerSeen = LingerRecord()  // told's first and second turn, then later's
        let thief = Atomic<Int>(0)
        let later = ClosureUnit { _, _ in
            if Int(ckplat_thread_id()) == thief.load(ordering: .sequentiallyConsistent) {
                lingerSeen.record(Worker.currentLingerPermit.mayLinger)
            }
            return .idle
        }
        let told = ClosureUnit { _, run in
            lingerSeen.record(Worker.currentLingerPermit.mayLinger)
            if run == 1 {
                thief.store(Int(ckplat_thread_id()), ordering: .sequentiallyConsistent)
                return .more
            }
            // Into the thief's own next slot: `later` runs there once told is idle.
            scheduler.schedule(later)
            return .idle
        }
        let turnOver = Atomic<Bool>(false)
        let long = ClosureUnit { _, _ in
            scheduler.schedule(told)  // into this worker's next slot, behind this long turn
            _ = waitUntil(seconds: 10) { told.runs.load(ordering: .sequentiallyConsistent) == 2 && lingerSeen.count >= 2 }
            turnOver.store(true, ordering: .sequentiallyConsistent)
            return .idle
        }
        scheduler.schedule(long)
        #expect(waitUntil(seconds: 60) { turnOver.load(ordering: .sequentiallyConsistent) })
        // Again from outside, should the long turn's worker have taken it first.
        for _ in 0..<1_000 where lingerSeen.count < 3 {
            let before = later.runs.load(ordering: .sequentiallyConsistent)
            scheduler.schedule(later)
            _ = waitUntil(seconds: 10) { later.runs.load(ordering: .sequentiallyConsistent) > before }
        }
        #expect(scheduler.metrics.longTurnSteals == 1, "\(scheduler.metrics)")
        // A later turn from the loop may add a fourth value; the first three are the test.
        #expect(Array(lingerSeen.values.prefix(3)) == [false, false, true], "linger enabled in told's two turns, then later's")
        scheduler.shutdown()
    }

    @Test("a token passed round a ring of units through the next slot never goes through a local queue, however long the other worker searches")
    func tokenIsNotStolenFromAnEmptyQueue() throws {
        // A huge spin count keeps the second worker searching (stealing) the whole time;
        // detection is off, so no next slot is ever stealable. The token never enters the
        // local queue while that queue is empty, so there is nothing to steal.
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 2, spinCount: 1_000_000, blockingThresholdMilliseconds: 0, readsEnvironment: false))
        let hopsLeft = Atomic<Int>(50_000)
        let done = Atomic<Bool>(false)
        final class Ring: @unchecked Sendable { var units: [ClosureUnit] = [] }
        let ring = Ring()
        ring.units = (0..<100).map { index in
            ClosureUnit { _, _ in
                if hopsLeft.wrappingSubtract(1, ordering: .relaxed).newValue > 0 {
                    scheduler.schedule(ring.units[(index + 1) % 100])
                } else {
                    done.store(true, ordering: .sequentiallyConsistent)
                }
                return .idle
            }
        }
        scheduler.schedule(ring.units[0])
        #expect(waitUntil(seconds: 60) { done.load(ordering: .sequentiallyConsistent) })
        // Only a turn the OS preempted for longer than the patience lets the searcher take
        // the token out of the next slot (the long-turn rule, tested below). The token then
        // reaches a local queue only if it goes round the whole ring while the preempted
        // turn that passed it on has not ended (that unit is re-queued, notified), and the
        // steal's stalled mark can outlive that turn by a few instructions: at most one
        // more steal of each kind per such steal. Without one, nothing else is ever stolen.
        let metrics = scheduler.metrics
        #expect(metrics.steals - metrics.longTurnSteals <= 2 * metrics.longTurnSteals, "\(metrics)")
        scheduler.shutdown()
        ring.units = []
    }

    @Test("a unit waiting in the next slot of a long turn is taken by a searching worker, with the blocking monitor off")
    func longTurnNextSlotIsTaken() throws {
        // Detection is off, so the owner is never marked stalled: only the long-turn rule
        // lets the searching worker (a huge spin count keeps it searching) take the unit
        // while the turn that made it runnable goes on. Reverted, the unit waits for the
        // turn's end and the turn's bounded wait below runs out.
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 2, spinCount: 1_000_000, blockingThresholdMilliseconds: 0, readsEnvironment: false))
        let duringTurn = toldUnitRunsDuringLongTurn(scheduler)
        #expect(duringTurn, "the told unit waited for the long turn to end")
        #expect(scheduler.metrics.longTurnSteals == 1, "\(scheduler.metrics)")
        scheduler.shutdown()
    }

    @Test("a worker whose next slot a thief emptied during a long turn is marked stalled: its next put wakes a sleeper to take it")
    func refilledNextSlotWakesASleeper() throws {
        // Detection off (the monitor never marks anyone), a long spin so the other worker
        // is searching when the first unit is put. It takes that one (the long-turn rule),
        // marking this worker stalled, runs it, searches its spin out and parks; the turn
        // then puts a second unit into its (now empty) next slot. Only the mark makes that
        // put wake the sleeper; reverted, nobody wakes it and the turn's bounded wait runs out.
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 2, spinCount: 20_000, blockingThresholdMilliseconds: 0, readsEnvironment: false))
        let turnOver = Atomic<Bool>(false)
        let secondDuringTurn = Atomic<Bool>(false)
        let first = ClosureUnit()
        let secondObserved = Atomic<Bool>(false)  // set after secondDuringTurn (`runs` counts before the body)
        let second = ClosureUnit { _, _ in
            secondDuringTurn.store(!turnOver.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            secondObserved.store(true, ordering: .sequentiallyConsistent)
            return .idle
        }
        let long = ClosureUnit { _, _ in
            scheduler.schedule(first)
            _ = waitUntil(seconds: 20) { first.runs.load(ordering: .sequentiallyConsistent) == 1 }
            _ = waitUntil(seconds: 20) { scheduler.idleSnapshot.sleeping == 1 }  // the thief parked
            scheduler.schedule(second)  // into this worker's empty next slot, same turn
            _ = waitUntil(seconds: 10) { secondObserved.load(ordering: .sequentiallyConsistent) }
            turnOver.store(true, ordering: .sequentiallyConsistent)
            return .idle
        }
        scheduler.schedule(long)
        #expect(waitUntil(seconds: 60) { turnOver.load(ordering: .sequentiallyConsistent) })
        #expect(waitUntil(seconds: 60) { secondObserved.load(ordering: .sequentiallyConsistent) })
        let duringTurn = secondDuringTurn.load(ordering: .sequentiallyConsistent)
        #expect(duringTurn, "the second unit waited for the long turn to end: \(scheduler.metrics)")
        let metrics = scheduler.metrics
        #expect(metrics.longTurnSteals == 1 && metrics.steals == 2, "\(metrics)")  // the second: a stalled slot
        scheduler.shutdown()
    }

    @Test("a unit retaken from the same long turn waits a patience that doubles per retake, up to its cap; another unit or turn starts again")
    func retakePatienceGrows() {
        let sink = UnsafeMutableRawPointer(bitPattern: 0x1000)!
        let other = UnsafeMutableRawPointer(bitPattern: 0x2000)!
        let base = Worker.nextSlotPatienceNanoseconds
        var watch = NextSlotWatch()
        #expect(watch.patience(for: sink, turns: 7) == base)  // never taken: the first take's patience
        watch.recordTake(sink, turns: 7)
        #expect(watch.isRetake(sink, turns: 7))
        #expect(watch.patience(for: sink, turns: 7) == base)  // the first retake waits the base again
        watch.recordTake(sink, turns: 7)
        #expect(watch.patience(for: sink, turns: 7) == 2 * base)
        watch.recordTake(sink, turns: 7)
        #expect(watch.patience(for: sink, turns: 7) == 4 * base)
        for _ in 0..<64 { watch.recordTake(sink, turns: 7) }
        #expect(watch.patience(for: sink, turns: 7) == Worker.maximumRetakePatienceNanoseconds)
        // Another unit, or the same unit in a later turn, is no retake: the base patience.
        #expect(!watch.isRetake(other, turns: 7) && watch.patience(for: other, turns: 7) == base)
        #expect(!watch.isRetake(sink, turns: 9) && watch.patience(for: sink, turns: 9) == base)
        watch.recordTake(sink, turns: 9)
        #expect(watch.patience(for: sink, turns: 9) == base)  // started again
        #expect(!NextSlotWatch().isRetake(nil, turns: 0))  // an empty slot is nobody's retake
    }
}

/// What unitTakenFromLongTurnDoesNotLinger's turns saw, in order (any thread). The runtime's
/// `Lock` (a pthread mutex ThreadSanitizer sees), not Synchronization's `Mutex`, whose futex
/// TSan does not see: it reported the test thread's read racing with a turn's append.
private final class LingerRecord: Sendable {
    private let seen = Lock<[Bool]>([])
    func record(_ lingering: Bool) { seen.withLock { $0.append(lingering) } }
    var values: [Bool] { seen.withLock { $0 } }
    var count: Int { seen.withLock { $0.count } }
}
