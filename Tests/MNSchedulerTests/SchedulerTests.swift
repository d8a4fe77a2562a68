import Dispatch
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

@Suite struct SchedulerTests {
    @Test("a unit scheduled from outside the pool runs once on one of the scheduler's workers")
    func runsFromOutside() throws {
        let scheduler = try makeScheduler()
        defer { scheduler.shutdown() }
        let ranOnWorker = Atomic<Int>(-1)
        let ran = DispatchSemaphore(value: 0)
        let unit = ClosureUnit { _, _ in
            ranOnWorker.store(Scheduler.currentWorkerIndex ?? -2, ordering: .sequentiallyConsistent)
            ran.signal()
            return .idle
        }
        scheduler.schedule(unit)
        // (runs is counted before the body runs: wait for the body's signal.)
        #expect(ran.wait(timeout: .now() + 20) == .success)
        #expect(unit.runs.load(ordering: .sequentiallyConsistent) == 1)
        #expect((0..<2).contains(ranOnWorker.load(ordering: .sequentiallyConsistent)))
        #expect(Scheduler.currentWorkerIndex == nil)
        #expect(!scheduler.isCurrentThreadWorker)
        #expect(scheduler.workerCount == 2)
        #expect(scheduler.configuration.workers == 2)
        #expect(scheduler.resolvedConfiguration.source(of: .workers) == .code)
    }

    @Test("isCurrentThreadWorker is true only on this scheduler's own workers")
    func currentThreadWorker() throws {
        let a = try makeScheduler(workers: 1)
        let b = try makeScheduler(workers: 1)
        defer { a.shutdown(); b.shutdown() }
        let seen = Atomic<Int>(0)
        let ran = DispatchSemaphore(value: 0)
        let unit = ClosureUnit { _, _ in
            seen.store((a.isCurrentThreadWorker ? 1 : 0) | (b.isCurrentThreadWorker ? 2 : 0) | 4, ordering: .sequentiallyConsistent)
            ran.signal()
            return .idle
        }
        a.schedule(unit)
        #expect(ran.wait(timeout: .now() + 20) == .success)
        #expect(seen.load(ordering: .sequentiallyConsistent) == 5)
    }

    @Test("a schedule that arrives during a turn makes the unit run again")
    func notifiedWhileRunning() throws {
        let scheduler = try makeScheduler()
        defer { scheduler.shutdown() }
        let unit = ClosureUnit { unit, run in
            if run == 1 { scheduler.schedule(unit) }  // running → notified
            return .idle
        }
        scheduler.schedule(unit)
        #expect(waitUntil { unit.runs.load(ordering: .sequentiallyConsistent) == 2 })
        #expect(waitUntil { unit.stateSnapshot == UnitHeader.idle })
        #expect(unit.runs.load(ordering: .sequentiallyConsistent) == 2)
    }

    @Test("scheduling an already scheduled unit is a no-op: it runs once")
    func scheduledTwiceRunsOnce() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let blocker = ClosureUnit { _, _ in
            entered.signal()
            gate.wait()  // holds the only worker until the test opens the gate
            return .idle
        }
        let unit = ClosureUnit()
        scheduler.schedule(blocker)
        #expect(entered.wait(timeout: .now() + 20) == .success)
        scheduler.schedule(unit)
        scheduler.schedule(unit)
        scheduler.schedule(unit)
        gate.signal()
        #expect(waitUntil { unit.runs.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(waitUntil { unit.stateSnapshot == UnitHeader.idle })
        #expect(unit.runs.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test("a turn gets the configured throughput as its budget, and .more re-queues the unit")
    func budgetIsThroughput() throws {
        let scheduler = try makeScheduler(workers: 1, throughput: 7)
        defer { scheduler.shutdown() }
        let unit = MailboxUnit()
        unit.send(100, via: scheduler)
        #expect(waitUntil { unit.processed.load(ordering: .sequentiallyConsistent) == 100 })
        #expect(unit.maxBudgetSeen.load(ordering: .relaxed) == 7)
        #expect(unit.turns.load(ordering: .relaxed) >= 15)  // ⌈100 / 7⌉
    }

    @Test("a flooding unit does not starve another unit, whether it was injected or scheduled from a worker")
    func floodDoesNotStarve() throws {
        let scheduler = try makeScheduler(workers: 1, throughput: 4)
        defer { scheduler.shutdown() }
        let stop = Atomic<Bool>(false)
        let victimFromOutside = ClosureUnit()
        let victimFromWorker = ClosureUnit()
        let flood = ClosureUnit { _, run in
            if run == 10 { scheduler.schedule(victimFromWorker) }
            return stop.load(ordering: .sequentiallyConsistent) ? .idle : .more
        }
        scheduler.schedule(flood)
        #expect(waitUntil { flood.runs.load(ordering: .sequentiallyConsistent) > 100 })
        scheduler.schedule(victimFromOutside)
        let ran = waitUntil {
            victimFromOutside.runs.load(ordering: .sequentiallyConsistent) == 1
                && victimFromWorker.runs.load(ordering: .sequentiallyConsistent) == 1
        }
        stop.store(true, ordering: .sequentiallyConsistent)
        #expect(ran)
    }

    @Test("a ping-pong pair through the next slot does not starve a unit in the local queue")
    func nextSlotIsCapped() throws {
        let scheduler = try makeScheduler(workers: 1)
        let stop = Atomic<Bool>(false)
        let waiting = ClosureUnit()
        final class Pair: @unchecked Sendable { var other: ClosureUnit? }
        let pair = Pair()
        let ping = ClosureUnit { _, run in
            if run == 1 { scheduler.schedule(waiting) }  // waiting → next slot, then displaced to local
            if !stop.load(ordering: .sequentiallyConsistent), let other = pair.other { scheduler.schedule(other) }
            return .idle
        }
        let pong = ClosureUnit { _, _ in
            if !stop.load(ordering: .sequentiallyConsistent) { scheduler.schedule(ping) }
            return .idle
        }
        pair.other = pong
        scheduler.schedule(ping)
        let ran = waitUntil { waiting.runs.load(ordering: .sequentiallyConsistent) == 1 }
        stop.store(true, ordering: .sequentiallyConsistent)
        #expect(ran)
        scheduler.shutdown()
        pair.other = nil  // ping → pair → pong → ping: break the test's own cycle (LeakSanitizer)
    }

    @Test("shutdown is idempotent, and a unit scheduled afterwards goes to its after-shutdown hook at once")
    func shutdownTwice() throws {
        let scheduler = try makeScheduler()
        #expect(!scheduler.isShutDown)
        #expect(scheduler.shutdown().isEmpty)
        #expect(scheduler.isShutDown)
        #expect(scheduler.shutdown().isEmpty)
        let unit = ClosureUnit()
        scheduler.schedule(unit)
        #expect(unit.runs.load(ordering: .sequentiallyConsistent) == 0)
        #expect(unit.abandoned.load(ordering: .sequentiallyConsistent) == 1)
        #expect(unit.stateSnapshot == UnitHeader.idle)
        scheduler.schedule(unit)  // idle again: a later schedule is handed over again
        #expect(unit.abandoned.load(ordering: .sequentiallyConsistent) == 2)
        // Every thread exited, so the run queues' and injection queue's rings were freed:
        // what stays of a shut-down scheduler is small. Metrics still answer.
        let released = scheduler.core.ringsReleased.load(ordering: .acquiring)
        #expect(released)
        #expect(scheduler.metrics.injectionQueueDepth == 0)
    }

    @Test("shutdown lets the running turn finish and hands back queued units without running them")
    func shutdownHandsBack() throws {
        let scheduler = try makeScheduler(workers: 1, capacity: 4)
        let entered = DispatchSemaphore(value: 0)
        let release = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
        let blocker = ClosureUnit { _, _ in
            entered.signal()
            while !release.load(ordering: .sequentiallyConsistent) { sched_yield() }
            finished.store(true, ordering: .sequentiallyConsistent)
            return .more  // asks to run again: must be handed back, not run
        }
        scheduler.schedule(blocker)
        #expect(entered.wait(timeout: .now() + 20) == .success)
        let queued = (0..<20).map { _ in ClosureUnit() }  // more than the local ring: injection + spill
        for unit in queued { scheduler.schedule(unit) }
        // Release the turn only once shutdown has begun, so nothing queued can run after it.
        let releaser = JoinableThread {
            _ = waitUntil { scheduler.isShutDown }
            release.store(true, ordering: .sequentiallyConsistent)
        }
        let handedBack = scheduler.shutdown()
        releaser.join()
        let turnFinished = finished.load(ordering: .sequentiallyConsistent)
        #expect(turnFinished)
        #expect(blocker.runs.load(ordering: .sequentiallyConsistent) == 1)
        let ids = Set(handedBack.map { ObjectIdentifier($0) })
        #expect(ids.count == handedBack.count)
        #expect(ids.contains(ObjectIdentifier(blocker)))
        for unit in queued {
            let ran = unit.runs.load(ordering: .sequentiallyConsistent)
            // Units run before shutdown began, or are handed back: never both, never lost.
            #expect((ran == 1) != ids.contains(ObjectIdentifier(unit)))
        }
        for unit in handedBack { #expect(unit.stateSnapshot == UnitHeader.idle) }
    }

    @Test("scheduling from a worker into a full local queue spills to the injection queue without losing units")
    func localOverflow() throws {
        let scheduler = try makeScheduler(workers: 2, capacity: 4)
        defer { scheduler.shutdown() }
        let ran = DispatchSemaphore(value: 0)
        let children = (0..<200).map { _ in ClosureUnit { _, _ in ran.signal(); return .idle } }
        let parent = ClosureUnit { _, _ in
            for child in children { scheduler.schedule(child) }
            return .idle
        }
        scheduler.schedule(parent)
        #expect((0..<200).allSatisfy { _ in ran.wait(timeout: .now() + 20) == .success })
        #expect(children.allSatisfy { $0.runs.load(ordering: .sequentiallyConsistent) == 1 })
    }
}
