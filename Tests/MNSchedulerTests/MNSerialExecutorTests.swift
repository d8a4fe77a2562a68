import Testing
import Synchronization
@testable import MNScheduler
import TestSupport
import FastMailboxTestKit

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

extension MNCounter {
    /// From inside this actor's turn: what `other`'s isolation failure would say here.
    func isolationFailureMessage(of other: MNSerialExecutor) -> String { other.isolationFailureMessage() }

    /// From inside this actor's turn: asserts `other`'s isolation (traps: wrong executor).
    func preconditionIsolated(to other: MNCounter) { other.preconditionIsolated() }
}

/// An exit test's body: one actor asserts another's isolation from inside its own turn.
func preconditionIsolationInAnotherActorsTurn() async {
    let scheduler = try! Scheduler(configuration: SchedulerConfiguration(workers: 1, readsEnvironment: false))
    let expected = MNCounter(scheduler: scheduler), running = MNCounter(scheduler: scheduler)
    print("expected \(MNSerialExecutor.describe(expected.executor)); running \(MNSerialExecutor.describe(running.executor))")
    await running.preconditionIsolated(to: expected)
}

/// "0x…" as the isolation failure message writes an object's address.
func hexAddress(_ object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
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
        #expect(counter.executor.isIsolatingCurrentContext() == nil)  // here: not on the pool (nil, never false)
        // On a worker, but inside another unit's turn: not isolated either.
        let other = MNCounter(scheduler: scheduler)
        let crossCheck = await Task(executorPreference: scheduler.taskExecutor) {
            (Scheduler.currentWorkerIndex != nil, counter.executor.isIsolatingCurrentContext())
        }.value
        #expect(crossCheck.0)
        #expect(crossCheck.1 == nil)
        _ = await other.increment()
    }

    @Test("assumeIsolated off the actor's executor stops the process with a message naming the executor and the thread")
    func assumeIsolatedFailsElsewhere() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            assumeIsolationOffThePool()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Incorrect actor executor assumption: expected MNSerialExecutor 0x"), "\(output)")
        #expect(output.contains(" on scheduler "), "\(output)")
        #expect(output.contains("but the caller runs on thread "), "\(output)")
        #expect(output.contains("outside every MNScheduler pool"), "\(output)")
    }

    @Test("preconditionIsolated in another actor's turn stops the process naming both executors and the worker")
    func preconditionIsolatedFailsInAnotherActor() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardOutputContent, \.standardErrorContent]) {
            await preconditionIsolationInAnotherActorsTurn()
        }
        let printed = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // The child printed both executors' descriptions before the trap.
        let names = try #require(printed.split(separator: "\n").first { $0.hasPrefix("expected ") })
        let parts = names.dropFirst("expected ".count).split(separator: "; running ", maxSplits: 1).map(String.init)
        try #require(parts.count == 2, "\(printed)")
        #expect(output.contains("expected \(parts[0]), but the caller runs on worker 0 of scheduler "), "\(output)")
        #expect(output.contains("'mn-worker-0'"), "\(output)")
        #expect(output.contains("in a turn of \(parts[1])"), "\(output)")
    }

    @Test("the isolation failure message names the executor expected and what the thread runs instead, wherever it is")
    func isolationFailureMessageNamesBothSides() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let expected = MNCounter(scheduler: scheduler), other = MNCounter(scheduler: scheduler)
        let expectedName = "expected MNSerialExecutor \(hexAddress(expected.executor)) on scheduler \(scheduler.id), "
        // A thread outside every pool (this test's).
        let outside = expected.executor.isolationFailureMessage()
        #expect(outside.hasPrefix("Incorrect actor executor assumption: " + expectedName), "\(outside)")
        #expect(outside.contains("but the caller runs on thread "), "\(outside)")
        #expect(outside.hasSuffix("outside every MNScheduler pool"), "\(outside)")
        // A task on the scheduler's task executor: a worker, in a lane's turn.
        let inTask = await Task(executorPreference: scheduler.taskExecutor) {
            (Scheduler.currentWorkerIndex, expected.executor.isolationFailureMessage())
        }.value
        let worker = try #require(inTask.0)
        #expect(inTask.1.contains(expectedName + "but the caller runs on worker \(worker) of scheduler \(scheduler.id) (thread "), "\(inTask.1)")
        #expect(inTask.1.contains("'mn-worker-\(worker)'), in a turn of MNTaskExecutor lane 0x"), "\(inTask.1)")
        // Another actor on the same scheduler: in that executor's turn (or inline run).
        let inOther = await other.isolationFailureMessage(of: expected.executor)
        #expect(inOther.contains(expectedName + "but the caller runs on worker "), "\(inOther)")
        #expect(inOther.hasSuffix("in a turn of MNSerialExecutor \(hexAddress(other.executor)) on scheduler \(scheduler.id)"), "\(inOther)")
        // Inside the expected executor there is nothing to report: the check passes.
        let facts = await expected.isolationFacts()
        #expect(facts.executorSays == true)
    }

    @Test("off the pool the message names the executor being drained, or the deterministic scheduler being driven")
    func isolationFailureMessageOffThePool() async throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let expected = MNCounter(scheduler: deterministic.scheduler), other = MNCounter(scheduler: deterministic.scheduler)
        // In the other actor's drain on the driving thread, and in a plain unit's turn there.
        let inOther = Task(executorPreference: deterministic.taskExecutor) {
            await other.isolationFailureMessage(of: expected.executor)
        }
        let inUnit = Mutex<String?>(nil)
        deterministic.scheduler.schedule(ClosureUnit { _, _ in
            inUnit.withLock { $0 = expected.executor.isolationFailureMessage() }
            return .idle
        })
        try deterministic.runUntilQuiescent()
        let drained = await inOther.value  // finished already: the drive ran it
        #expect(drained.contains("but the caller runs on thread "), "\(drained)")
        #expect(drained.hasSuffix("off the pool, draining MNSerialExecutor \(hexAddress(other.executor)) on scheduler \(deterministic.scheduler.id)"), "\(drained)")
        let unit = try #require(inUnit.withLock { $0 })
        #expect(unit.hasSuffix("driving a DeterministicScheduler (a turn of another unit, or between turns)"), "\(unit)")
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
