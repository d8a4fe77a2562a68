// The direct run of an awaited call (E4 in MNSerialExecutor.swift): a pool task's call to an
// idle actor with nothing queued runs without entering the actor's queue, so an actor that
// only ever gets such calls allocates no job ring. Every check counts or compares exactly,
// at a point the code under test has already passed: no timing.

import Testing
import Synchronization
import Dispatch
@testable import MNScheduler
import TestSupport

/// A native actor that counts calls, and runs a caller's closure inside its isolation.
actor DirectCounter: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// Closures told to this actor that ran (readable from anywhere).
    let toldRuns = Atomic<Int>(0)
    /// Calls of `increment` so far (readable from anywhere).
    let calls = Atomic<Int>(0)
    var count = 0
    var order: [Int] = []

    init(executor: MNSerialExecutor) { self.executor = executor }

    func increment() -> Int {
        calls.add(1, ordering: .relaxed)
        count += 1
        return count
    }

    func append(_ value: Int) { order.append(value) }

    func told() { toldRuns.add(1, ordering: .relaxed) }

    /// Runs `body` inside this actor's isolation.
    func inside(_ body: @Sendable () -> Void) { body() }
}

@Suite struct MNDirectRunTests {
    @Test("awaited calls from a pool task to an idle actor allocate no job ring; the first tell does")
    func callOnlyActorHasNoRing() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = DirectCounter(executor: MNSerialExecutor(scheduler: scheduler))
        let last = await Task(executorPreference: scheduler.taskExecutor) {
            var last = 0
            for _ in 0..<1_000 { last = await counter.increment() }
            return last
        }.value
        #expect(last == 1_000)
        #expect(counter.executor.jobs.ringBytes == 0, "a call-only actor keeps no ring")
        counter.tell { $0.told() }
        #expect(counter.executor.jobs.ringBytes > 0)
        _ = await counter.increment()   // after the tell (same thread, FIFO)
        #expect(counter.toldRuns.load(ordering: .relaxed) == 1)
    }

    @Test("a closure told from another thread during a direct run runs before the caller resumes, once")
    func tellDuringDirectRun() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = DirectCounter(executor: MNSerialExecutor(scheduler: scheduler))
        let seen = await Task(executorPreference: scheduler.taskExecutor) { () -> [Int] in
            var seen: [Int] = []
            for round in 1...50 {
                await counter.inside {
                    // Off the pool, while this actor runs: the tell finds the claim taken
                    // (and, the first time, installs the ring), so it schedules nothing.
                    let returned = DispatchSemaphore(value: 0)
                    DispatchQueue.global().async {
                        counter.tell { $0.told() }
                        returned.signal()
                    }
                    returned.wait()
                }
                // The inline run drained the tell before this task could resume.
                seen.append(counter.toldRuns.load(ordering: .relaxed) - round)
            }
            return seen
        }.value
        #expect(seen == Array(repeating: 0, count: 50))
        #expect(counter.toldRuns.load(ordering: .relaxed) == 50)
    }

    @Test("a pool task's tells run before its later awaited call, also at throughput 1")
    func tellsThenCallKeepOrder() async throws {
        for throughput in [1, 64] {
            let scheduler = try makeScheduler(workers: 2, throughput: throughput)
            defer { scheduler.shutdown() }
            let counter = DirectCounter(executor: MNSerialExecutor(scheduler: scheduler))
            let order = await Task(executorPreference: scheduler.taskExecutor) { () -> [Int] in
                var expected = 0
                for round in 0..<200 {
                    for _ in 0..<(round % 4) {
                        let value = expected
                        counter.tell { $0.append(value) }
                        expected += 1
                    }
                    await counter.append(expected)
                    expected += 1
                }
                return await counter.order
            }.value
            #expect(order == Array(0..<order.count), "throughput \(throughput)")
            #expect(order.count == (0..<200).reduce(0) { $0 + $1 % 4 + 1 })
        }
    }

    @Test("an idle native actor's executor, its queue inline, is one heap block of at most 96 bytes")
    func idleExecutorFootprint() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let executors = (0..<HeapSampling.count).map { _ in MNSerialExecutor(scheduler: scheduler) }
        // malloc_usable_size of the executor, which stores its MPSCQueue: the executor has no
        // off-pool thread word and no separate running-job and inline-host words, the queue
        // no overflow fields or count (MPSCQueue.swift, "Where the fields live").
        // The smallest of HeapSampling.count, all alive at once (see there).
        let executorBytes = executors.map { heapBlockSize(of: $0) }.min()!
        #expect(executorBytes <= 96, "executor \(executorBytes)")
        #expect(executors.allSatisfy { $0.jobs.ringBytes == 0 })
    }

    @Test("a task that keeps calling an idle actor gets at most `throughput` runs of its lane's turn; the lane's other task runs next")
    func resumesShareTheTurnBudget() throws {
        let throughput = 8
        let scheduler = try makeScheduler(workers: 1, throughput: throughput)
        defer { scheduler.shutdown() }
        let executor = MNTaskExecutor(laneCount: 1, gate: scheduler.gate)   // one lane for both tasks
        let counter = DirectCounter(executor: MNSerialExecutor(scheduler: scheduler))
        let otherQueued = DispatchSemaphore(value: 0)
        let seenByOther = Atomic<Int>(-1)
        let finished = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            otherQueued.wait()   // the other task is queued on the lane before the first call
            for _ in 0..<1_000 { _ = await counter.increment() }
            finished.signal()
        }
        Task(executorPreference: executor) {
            seenByOther.store(counter.calls.load(ordering: .relaxed), ordering: .relaxed)
            finished.signal()
        }
        otherQueued.signal()
        finished.wait()
        finished.wait()
        // The calling task's first run and its resumes share the turn's budget: its call
        // number `throughput` hops back with the budget spent and queues behind the other
        // task. (Resumes without a budget would let it make all 1,000 calls first.)
        #expect(seenByOther.load(ordering: .relaxed) == throughput)
        #expect(counter.calls.load(ordering: .relaxed) == 1_000)
    }
}
