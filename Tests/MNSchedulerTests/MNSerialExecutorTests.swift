import Testing
import Synchronization
@testable import MNScheduler

actor MNCounter {
    let executor: MNSerialExecutor
    var count = 0
    init(scheduler: Scheduler) { executor = MNSerialExecutor(scheduler: scheduler) }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func increment() -> Int {
        count += 1
        return count
    }

    /// Runs on this actor: true when the executor says so and the runtime agrees.
    func isolationFacts() -> (onWorker: Bool, executorSays: Bool?) {
        self.preconditionIsolated()
        self.assumeIsolated { _ in }
        return (Scheduler.currentWorkerIndex != nil, executor.isIsolatingCurrentContext())
    }
}

@MNGlobalActor func onGlobalActor() -> Int? {
    MNGlobalActor.preconditionIsolated()
    MNGlobalActor.shared.assumeIsolated { _ in }
    return Scheduler.currentWorkerIndex
}

/// Called from a test's thread (not a worker): must trap in assumeIsolated.
func assumeIsolationOffThePool() {
    let scheduler = try! Scheduler(configuration: SchedulerConfiguration(workers: 1, readsEnvironment: false))
    let counter = MNCounter(scheduler: scheduler)
    counter.assumeIsolated { _ in }
}

@Suite struct MNSerialExecutorTests {
    @Test("a native actor on MNSerialExecutor counts 1M awaited calls from a task on MNTaskExecutor exactly")
    func millionCalls() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = MNCounter(scheduler: scheduler)
        let calls = 1_000_000
        let last = await Task(executorPreference: scheduler.taskExecutor) {
            var last = 0
            for _ in 0..<calls { last = await counter.increment() }
            return last
        }.value
        #expect(last == calls)
        #expect(await counter.count == calls)
    }

    @Test("4 concurrent caller tasks on MNTaskExecutor make 40k awaited calls to one actor, none lost")
    func concurrentCallers() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = MNCounter(scheduler: scheduler)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask(executorPreference: scheduler.taskExecutor) {
                    for _ in 0..<10_000 { _ = await counter.increment() }
                }
            }
        }
        #expect(await counter.count == 40_000)
    }

    @Test("calls from Swift's default pool and from MNTaskExecutor interleave on one actor without loss")
    func mixedCallers() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = MNCounter(scheduler: scheduler)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for _ in 0..<5000 { _ = await counter.increment() } }
            group.addTask(executorPreference: scheduler.taskExecutor) { for _ in 0..<5000 { _ = await counter.increment() } }
        }
        #expect(await counter.count == 10_000)
    }

    @Test("actor code runs on a worker, where preconditionIsolated and assumeIsolated succeed; elsewhere the executor says no")
    func isolation() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let counter = MNCounter(scheduler: scheduler)
        let facts = await counter.isolationFacts()
        #expect(facts.onWorker)
        #expect(facts.executorSays == true)
        #expect(counter.executor.isIsolatingCurrentContext() == false)  // here: not on the pool
        // On a worker, but inside another unit's turn: not isolated either.
        let other = MNCounter(scheduler: scheduler)
        let crossCheck = await Task(executorPreference: scheduler.taskExecutor) {
            (Scheduler.currentWorkerIndex != nil, counter.executor.isIsolatingCurrentContext())
        }.value
        #expect(crossCheck.0)
        #expect(crossCheck.1 == false)
        _ = await other.increment()
    }

    @Test("assumeIsolated off the actor's executor stops the process with a clear message")
    func assumeIsolatedFailsElsewhere() async throws {
        await #expect(processExitsWith: .failure) {
            assumeIsolationOffThePool()
        }
    }

    @Test("Task(executorPreference:) and withTaskExecutorPreference run task code on the scheduler's workers")
    func taskExecutorRunsOnWorkers() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let index = await Task(executorPreference: scheduler.taskExecutor) { Scheduler.currentWorkerIndex }.value
        #expect(index != nil)
        let viaTask = await scheduler.task { scheduler.isCurrentThreadWorker }.value
        #expect(viaTask)
        let inside = await withTaskExecutorPreference(scheduler.taskExecutor) {
            await Task.yield()
            return scheduler.isCurrentThreadWorker
        }
        #expect(inside)
        // Many independent tasks all complete (lanes spread over workers).
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<1000 { group.addTask(executorPreference: scheduler.taskExecutor) { i } }
            return await group.reduce(0, +)
        }
        #expect(sum == 999 * 1000 / 2)
    }

    @Test("@MNGlobalActor code runs on Scheduler.shared's workers with isolation checks passing")
    func globalActor() async {
        let index = await onGlobalActor()
        #expect(index != nil)
        #expect(Scheduler.shared.workerCount >= 1)
        #expect(MNGlobalActor.shared.executor.scheduler === Scheduler.shared)
    }
}

extension MNSerialExecutorTests {
    @Test("after its scheduler shut down, a native actor still runs every call, serially and isolated, off the pool")
    func callsAfterShutdown() async throws {
        let scheduler = try makeScheduler(workers: 2)
        let counter = MNCounter(scheduler: scheduler)
        for _ in 0..<100 { _ = await counter.increment() }
        scheduler.shutdown()
        #expect(scheduler.isShutDown)
        // Concurrent callers from Swift's default pool; each call must run exactly once and
        // the executor must still report isolation (preconditionIsolated inside).
        let totals = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { var last = 0; for _ in 0..<50 { last = await counter.increment() }; return last } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(totals.max() == 100 + 8 * 50)
        let facts = await counter.isolationFacts()
        #expect(facts.onWorker == false)
        #expect(facts.executorSays == true)
    }
}
