import Testing
import Synchronization
@testable import MNScheduler

/// A default (Swift-executor) actor: a pool task that awaits it hops lanes twice per call.
private actor DefaultCounter {
    var count = 0
    func increment() -> Int { count += 1; return count }
}

/// Hops (MNTaskExecutor.swift, "The resume slot"): a pool task awaiting a default actor.
@Suite struct MNTaskExecutorHopTests {
    /// Jobs run from the lanes' resume slots so far (debug builds' hook). Read only after the
    /// task whose hops it counts has completed (its completion orders the lane's writes).
    private static func resumedRuns(_ scheduler: Scheduler) -> Int {
        #if DEBUG
        return scheduler.taskExecutor.lanes.reduce(0) { $0 + $1.resumedRuns }
        #else
        return -1
        #endif
    }

    // Before the resume slot took H2/H3 hops, each call went through a lane push, a
    // schedule() and a turn each way: 2 turns per call, 40 turns for these 20 calls, and no
    // resumed runs (checked by disabling the H2/H3 branch of hopLane: turns 40, runs 0).
    @Test("a pool task's awaited calls to a default actor run in its lane's turn: no lane push, no extra turn")
    func defaultActorCallsStayInTheTurn() async throws {
        let scheduler = try makeScheduler(workers: 1, throughput: 64)
        defer { scheduler.shutdown() }
        let counter = DefaultCounter()
        let turnCount = scheduler.core.shared[0]
        let runsBefore = Self.resumedRuns(scheduler)
        let (turns, last) = await scheduler.task { () -> (UInt, Int) in
            _ = await counter.increment()  // the first call may start on any lane
            let before = turnCount.turnCount.load(ordering: .relaxed)
            var last = 0
            for _ in 0..<20 { last = await counter.increment() }
            return ((turnCount.turnCount.load(ordering: .relaxed) &- before) / 2, last)
        }.value
        #expect(last == 21)
        // 40 job runs plus the one running: at most one budget boundary (64 runs per turn).
        #expect(turns <= 2, "the 20 calls took \(turns) turns (2 per call without the resume slot)")
        #if DEBUG
        #expect(Self.resumedRuns(scheduler) - runsBefore >= 40, "each call's two hops run from the resume slot")
        #endif
    }

    // The bound: a task that hops forever gets at most `throughput` runs per lane turn, then
    // its lane goes to the back of the worker's queue. Checked by removing the `runsLeft > 0`
    // test from takeResumed: task A then keeps its lane's turn, B never runs, and A stops at
    // its limit (this test fails with `hops == limit`).
    @Test("a task hopping to a default actor forever does not starve another task on a one-worker pool")
    func hoppingTaskDoesNotStarveOthers() async throws {
        // Blocking detection off: its spare thread would otherwise rescue the other task
        // from a turn that never ends, hiding a broken bound.
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 1, throughput: 8, pinWorkers: false, blockingThresholdMilliseconds: 0,
            maxBlockingThreads: 0, readsEnvironment: false))
        defer { scheduler.shutdown() }
        let counter = DefaultCounter()
        final class Flags: Sendable {
            let stop = Atomic<Bool>(false)
            let hops = Atomic<Int>(0)
        }
        let flags = Flags()
        let limit = 200_000
        let hopper = scheduler.task { () -> Int in
            var calls = 0
            while !flags.stop.load(ordering: .acquiring), calls < limit {
                _ = await counter.increment()
                calls += 1
                flags.hops.store(calls, ordering: .relaxed)
            }
            return calls
        }
        #expect(waitUntil { flags.hops.load(ordering: .relaxed) >= 100 })  // A is hopping on the only worker
        let other = scheduler.task { () -> Int in
            flags.stop.store(true, ordering: .releasing)
            return flags.hops.load(ordering: .relaxed)
        }
        let seenByOther = await other.value
        let calls = await hopper.value
        #expect(seenByOther < limit, "the other task ran only once the hopper gave up")
        #expect(calls < limit, "the hopper was never interrupted")
    }
}
