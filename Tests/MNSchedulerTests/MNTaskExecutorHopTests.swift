import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

/// A default (Swift-executor) actor: a pool task that awaits it hops lanes twice per call.
private actor DefaultCounter {
    var count = 0
    func increment() -> Int { count += 1; return count }
}

/// A parked continuation and whether its task ran on after it was resumed.
private final class Parking: Sendable {
    let slot = Lock<CheckedContinuation<Void, Never>?>(nil)  // not Mutex: TSan cannot see its futex
    let progressed = Atomic<Bool>(false)
}

/// A default actor whose method parks its caller on a continuation the test resumes.
private actor Holder {
    func park(_ parking: Parking) async {
        await withCheckedContinuation { continuation in parking.slot.withLock { $0 = continuation } }
        parking.progressed.store(true, ordering: .releasing)  // isolated to Holder again: it ran
    }
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

    // Without the resume slot's H2/H3 hops, each call would go through a lane push, a
    // schedule() and a turn each way: 2 turns per call, and no resumed runs (disabling the
    // H2/H3 branch of hopLane shows it).
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

    // A running pool task resumes another task (parked inside a default actor) and keeps
    // its worker busy until that task has run. The resumed task comes to this executor
    // from inside the running task's job: not a hop (both are tasks, and a task is
    // current), so it goes round-robin and lands in the busy worker's next slot, which the
    // blocking monitor hands to a spare thread. Before round-robin skipped the lane
    // running on the worker, the cursor picked that very lane here: the task waited behind
    // the job that resumed it until the 20 s wait gave up, and this test failed (3 runs of 3
    // with the skip disabled). Taking it into the resume slot would fail the same way.
    @Test("a task resumed by a running pool task is not held behind that task's job")
    func taskResumedByARunningTaskIsNotHeldBehindIt() async throws {
        // One worker, so the lane cursors are deterministic: the parked task starts on lane
        // 0 and the resuming task on lane 1 (outside cursor); the worker's first
        // round-robin push picks lane 0 + 1 = 1, the resuming task's own lane. The monitor
        // starts a spare thread for the stalled worker's next slot.
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let shared = Parking()
        let holder = Holder()
        let parked = scheduler.task { await holder.park(shared) }
        #expect(waitUntil { shared.slot.withLock { $0 != nil } })
        let sawProgress = await scheduler.task { () -> Bool in
            let continuation = shared.slot.withLock { value -> CheckedContinuation<Void, Never>? in
                defer { value = nil }
                return value
            }
            continuation?.resume()
            // This job keeps running (and its worker busy) until the parked task has run.
            return waitUntil { shared.progressed.load(ordering: .acquiring) }
        }.value
        await parked.value
        #expect(sawProgress, "the resumed task waited for the job that resumed it to return")
    }
}
