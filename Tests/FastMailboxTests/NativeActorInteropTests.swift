// Native Swift actors beside ours: a native `actor` on an MNSerialExecutor of the system's
// scheduler holds ActorRefs and is called from event actors; global actors run their code
// on scheduler workers.
//
// Shutdown note: MNSerialExecutor / MNTaskExecutor trap when a job is enqueued after
// their scheduler shut down, so every test waits until the last job of each task it
// started has run (the task's final statement records into a Probe) before shutdown().

import Testing
import Synchronization
import MallocCounter
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit
import MNScheduler

/// A native actor with `tell` (MNActor), for the allocation count.
private actor TellCounter: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var count = 0
    init(executor: MNSerialExecutor) { self.executor = executor }
    func increment() { count += 1 }
}

/// A native actor on the system's scheduler that keeps the refs of its callers.
private actor Registry {
    private let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private(set) var calls = 0
    private(set) var callers: Set<ActorRef<RegistryClientMessage>> = []
    /// Calls that did not run on one of the scheduler's workers (must stay 0).
    private(set) var callsOffPool = 0

    init(scheduler: Scheduler) { executor = MNSerialExecutor(scheduler: scheduler) }

    nonisolated var executorForTests: MNSerialExecutor { executor }

    func register(_ caller: ActorRef<RegistryClientMessage>) {
        preconditionIsolated()   // traps unless this runs inside the executor's turn
        if !executor.scheduler.isCurrentThreadWorker { callsOffPool += 1 }
        calls += 1
        callers.insert(caller)
    }

    /// Tells every registered caller `.ping(n)`; returns how many it told.
    func broadcast(_ n: Int) -> Int {
        for caller in callers { caller.tell(.ping(n)) }
        return callers.count
    }
}

private enum RegistryClientMessage: Sendable {
    /// Call the registry (from a task that prefers the scheduler's task executor).
    case callRegistry
    /// Sent by the registry's broadcast.
    case ping(Int)
}

/// Code isolated to the shared scheduler's global actor reports where it ran.
@MNGlobalActor private func whereMNGlobalActorRuns() -> (worker: Int?, onShared: Bool, isolated: Bool) {
    MNGlobalActor.shared.preconditionIsolated()
    let isolated = MNGlobalActor.shared.executor.isIsolatingCurrentContext() == true
    return (Scheduler.currentWorkerIndex, Scheduler.shared.isCurrentThreadWorker, isolated)
}

/// A cache on MNGlobalActor, counted exactly.
@MNGlobalActor private final class GlobalCounter {
    static let shared = GlobalCounter()
    private(set) var hits = 0
    private(set) var offPool = 0
    func hit() {
        if !Scheduler.shared.isCurrentThreadWorker { offPool += 1 }
        hits += 1
    }
}

/// A custom global actor on the shared scheduler, holding a cache (the ImageDatabase shape).
@globalActor private actor TestDatabase {
    static let shared = TestDatabase()
    nonisolated let executor = MNSerialExecutor(scheduler: .shared)
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var entries: [String: Int] = [:]
    func store(_ key: String, _ value: Int) { entries[key] = value }
    var count: Int { entries.count }
}

/// `@TestDatabase` code reaches the actor's own state through assumeIsolated (checked at run time).
@TestDatabase private func testDatabaseCountOnWorker() -> (count: Int, worker: Int?) {
    let count = TestDatabase.shared.assumeIsolated { db in db.count }
    return (count, Scheduler.currentWorkerIndex)
}

/// An event actor that records what an MNSerialExecutor's isolation failure would say in its turn.
final class IsolationReporter: EventActor {
    let executor: MNSerialExecutor
    let messages: SignalingProbe<String>
    init(executor: MNSerialExecutor, messages: SignalingProbe<String>) {
        self.executor = executor
        self.messages = messages
    }
    func receive(_ message: Int, context: ActorContext<Int>) {
        messages.record(executor.isolationFailureMessage())
    }
}

@Suite("Native Swift actors beside ours", .serialized) struct NativeActorInteropTests {
    @Test("in an event actor's turn, a native actor's isolation failure message names that actor's cell and type")
    func isolationFailureMessageInAnEventActor() async throws {
        let system = try makeSystem(workers: 1)
        let registry = Registry(scheduler: system.scheduler)
        let messages = SignalingProbe<String>()
        let ref = try system.spawn { IsolationReporter(executor: registry.executorForTests, messages: messages) }
        ref.tell(1)
        #expect(await messages.waitForCount(1))
        let message = try #require(messages.values.first)
        #expect(message.hasPrefix("Incorrect actor executor assumption: expected MNSerialExecutor 0x"), "\(message)")
        #expect(message.contains("but the caller runs on worker 0 of scheduler "), "\(message)")
        #expect(message.contains(", in a turn of FastMailbox.ActorCell<FastMailbox.EventActorCellBehavior<FastMailboxTests.IsolationReporter>> 0x"), "\(message)")
        system.shutdown()
    }


    @Test("a native actor on the system's executor, called from event actors, counts every call exactly and can tell the refs it holds")
    func nativeActorHoldsRefs() async throws {
        let system = try makeSystem(workers: 2)
        let registry = Registry(scheduler: system.scheduler)
        let callsDone = SignalingProbe<ActorID>()
        let pings = SignalingProbe<Int>()
        let actors = 4, callsPerActor = 250
        let refs = try (0..<actors).map { i in
            try system.spawn(options: SpawnOptions(name: "client-\(i)")) { (message: RegistryClientMessage, context) in
                switch message {
                case .callRegistry:
                    let myself = context.myself
                    Task(executorPreference: context.system.scheduler.taskExecutor) {
                        await registry.register(myself)
                        callsDone.record(myself.id)   // the task's last job: it ran on the pool
                    }
                case .ping(let n):
                    pings.record(n)
                }
            }
        }
        for _ in 0..<callsPerActor { for ref in refs { ref.tell(.callRegistry) } }

        #expect(await callsDone.waitForCount(actors * callsPerActor, timeout: .seconds(10)))
        #expect(await registry.calls == actors * callsPerActor)
        #expect(await registry.callsOffPool == 0)
        #expect(await registry.callers == Set(refs))

        let told = await registry.broadcast(7)
        #expect(told == actors)
        #expect(await pings.waitForCount(actors, timeout: .seconds(5)))
        #expect(pings.values == Array(repeating: 7, count: actors))

        let report = system.shutdown()
        #expect(report.delivered == actors * callsPerActor + actors)
        #expect(report.deadLettered == 0)
        #expect(report.left == 0)
    }

    @Test("a task that prefers the scheduler's task executor resumes on a worker after awaiting a native actor")
    func fastPathStaysOnPool() async throws {
        let system = try makeSystem(workers: 2)
        let registry = Registry(scheduler: system.scheduler)
        let ref = try system.spawn(options: SpawnOptions(name: "caller")) { (_: RegistryClientMessage, _) in }
        let scheduler = system.scheduler
        let onPool = await Task(executorPreference: scheduler.taskExecutor) {
            var resumedOnWorker = 0
            for _ in 0..<100 {
                await registry.register(ref)
                if scheduler.isCurrentThreadWorker { resumedOnWorker += 1 }
            }
            return resumedOnWorker
        }.value
        #expect(onPool == 100)
        #expect(await registry.calls == 100)
        #expect(await registry.callsOffPool == 0)
        system.shutdown()
    }

    @Test("MNGlobalActor code runs on a worker of the shared scheduler, isolated to its executor")
    func globalActorRunsOnWorker() async {
        let (worker, onShared, isolated) = await whereMNGlobalActorRuns()
        #expect(worker != nil)
        #expect(onShared)
        #expect(isolated)
        // Off the executor the isolation check answers "not here": nil, so that the runtime's
        // trap is checkIsolated()'s, which names the executor (assumeIsolated would trap).
        #expect(MNGlobalActor.shared.executor.isIsolatingCurrentContext() == nil)
    }

    @Test("a custom global actor's code runs on a scheduler worker where assumeIsolated on its shared instance succeeds")
    func customGlobalActorAssumeIsolated() async {
        for i in 0..<10 { await TestDatabase.shared.store("key-\(i)", i) }
        let (count, worker) = await testDatabaseCountOnWorker()
        #expect(count == 10)
        #expect(worker != nil)
        #expect(TestDatabase.shared.executor.isIsolatingCurrentContext() == nil)
    }

    @Test("event actors of a system on the shared scheduler call a global-actor cache and every call is counted on the pool")
    func eventActorsCallGlobalActor() async throws {
        let system = ActorSystem(name: "interop-global", scheduler: .shared)
        let before = await GlobalCounter.shared.hits
        let done = SignalingProbe<Int>()
        let calls = 200
        let ref = try system.spawn(options: SpawnOptions(name: "global-caller")) { (n: Int, context) in
            Task(executorPreference: context.system.scheduler.taskExecutor) {
                await GlobalCounter.shared.hit()
                done.record(n)
            }
        }
        for n in 0..<calls { ref.tell(n) }
        #expect(await done.waitForCount(calls, timeout: .seconds(10)))
        #expect(await GlobalCounter.shared.hits - before == calls)
        #expect(await GlobalCounter.shared.offPool == 0)
        #expect(Set(done.values) == Set(0..<calls))
        let report = system.shutdown()   // leaves Scheduler.shared running
        #expect(report.delivered == calls)
        #expect(!Scheduler.shared.isShutDown)
    }

    @Test("MNActor.tell of a closure that captures nothing allocates nothing per call, and neither does running it")
    func tellAllocatesNothing() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        // A DeterministicScheduler runs the actor's turns on this thread, only when driven,
        // so the count sees exactly the tells (and then exactly the turns).
        let deterministic = DeterministicScheduler(seed: 1)
        let counter = TellCounter(executor: MNSerialExecutor(scheduler: deterministic.scheduler))
        counter.tell { $0.increment() }   // allocates the job ring outside the count
        try deterministic.runUntilQuiescent()
        // At most capacity − 1 queued at once: the ring never overflows (past it, the
        // overflow allocates one chunk per up to 1,024 entries: MailboxTests).
        let batches = 60, perBatch = MNSerialExecutor.jobQueueCapacity - 1
        var tellAllocations: UInt64 = 0, runAllocations: UInt64 = 0
        for _ in 0..<batches {
            let start = malloc_counter_thread_allocations()
            for _ in 0..<perBatch { counter.tell { $0.increment() } }
            let told = malloc_counter_thread_allocations()
            try deterministic.runUntilQuiescent()
            tellAllocations += told - start
            runAllocations += malloc_counter_thread_allocations() - told
        }
        #expect(tellAllocations == 0, "\(tellAllocations) allocations in \(batches * perBatch) tells")
        #expect(runAllocations == 0, "\(runAllocations) allocations running \(batches * perBatch) told closures")
        #expect(try counter.countWhenDriven(on: deterministic) == 1 + batches * perBatch)
    }
}

private extension TellCounter {
    /// The count, read through a tell driven on this thread (no await needed).
    nonisolated func countWhenDriven(on deterministic: DeterministicScheduler) throws -> Int {
        let result = Mutex(0)
        tell { actor in result.withLock { $0 = actor.count } }
        try deterministic.runUntilQuiescent()
        return result.withLock { $0 }
    }
}
