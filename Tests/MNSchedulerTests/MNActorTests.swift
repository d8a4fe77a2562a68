// MNActor.tell (fire-and-forget) and the inline fast path of awaited calls (see the file
// comment of MNSerialExecutor.swift). Every check counts or compares exactly: no timing.

import Testing
import Synchronization
import Dispatch
import FastMailboxTestKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

/// Shared probes the actor's code writes into from inside its isolation.
final class ExclusivityProbe: Sendable {
    /// Entries currently inside the actor's code (must never exceed 1).
    let inside = Atomic<Int>(0)
    /// Entries that found another one inside.
    let overlaps = Atomic<Int>(0)
    /// Closures or calls that found themselves not isolated to the actor.
    let notIsolated = Atomic<Int>(0)

    /// Brackets one unit of the actor's work: counts an overlap if another is inside.
    func enter() {
        if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
            overlaps.add(1, ordering: .relaxed)
        }
    }

    func leave() { inside.subtract(1, ordering: .acquiringAndReleasing) }
}

/// A native actor on an MNSerialExecutor that records what reached it, in order.
actor Recorder: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let probe = ExclusivityProbe()

    /// Values in arrival order (one list per sender).
    var log: [Int: [Int]] = [:]
    var count = 0

    init(executor: MNSerialExecutor) { self.executor = executor }

    /// One unit of work from `sender`: checks exclusivity and isolation, then records.
    func record(_ value: Int, from sender: Int = 0) {
        probe.enter()
        if executor.isIsolatingCurrentContext() != true { probe.notIsolated.add(1, ordering: .relaxed) }
        preconditionIsolated()
        log[sender, default: []].append(value)
        count += 1
        for _ in 0..<16 { ckshimSpin() }  // widen the window an overlap would need
        probe.leave()
    }

    func values(from sender: Int = 0) -> [Int] { log[sender] ?? [] }

    /// The calling thread (pthread_self bits), whether the executor reports isolation, the
    /// worker, and whether this runs inline (the executor's unit is idle: not in a turn).
    func whereAmI() -> (thread: UInt, isolated: Bool?, worker: Int?, inline: Bool) {
        (UInt(pthread_self()), executor.isIsolatingCurrentContext(), Scheduler.currentWorkerIndex,
         executor.stateSnapshot == UnitHeader.idle)
    }
}

/// A loop step the optimizer keeps (an atomic load), standing in for real work.
private let spinWord = Atomic<Int>(0)
@inline(never) func ckshimSpin() { _ = spinWord.load(ordering: .relaxed) }

/// An actor whose unownedExecutor is not its `executor`: tell must refuse it.
actor MismatchedActor: MNActor {
    nonisolated let executor: MNSerialExecutor
    init(executor: MNSerialExecutor) { self.executor = executor }
    // unownedExecutor: the default actor's own (not `executor`).
}

func tellOnMismatchedActor() {
    let scheduler = try! Scheduler(configuration: SchedulerConfiguration(workers: 1, readsEnvironment: false))
    MismatchedActor(executor: MNSerialExecutor(scheduler: scheduler)).tell { _ in }
}

/// A captured object that reports its release.
final class Tracked: Sendable {
    let value: Int
    let onDeinit: @Sendable () -> Void
    init(value: Int, onDeinit: @escaping @Sendable () -> Void) { self.value = value; self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// A weak reference to a `Tracked`.
struct WeakTracked {
    weak var object: Tracked?
    init(_ object: Tracked) { self.object = object }
}

/// The usual shape of an MNActor: it owns its executor, so freeing the actor frees the
/// executor unless something else (a turn in progress) holds it.
actor ExecutorOwner: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let onDeinit: @Sendable () -> Void
    var count = 0
    init(scheduler: Scheduler, onDeinit: @escaping @Sendable () -> Void) {
        executor = MNSerialExecutor(scheduler: scheduler)
        self.onDeinit = onDeinit
    }
    deinit { onDeinit() }
}

@Suite struct MNActorTests {
    @Test("closures told from one thread run exactly once each, in the order told, before a later awaited call")
    func tellOrderFromOneThread() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        let n = 20_000
        for i in 0..<n { recorder.tell { $0.record(i) } }   // this test's thread (off the pool)
        // An awaited call made after the tells, from the same thread, runs after all of them.
        let values = await recorder.values()
        #expect(values == Array(0..<n))
        #expect(recorder.probe.overlaps.load(ordering: .relaxed) == 0)
        #expect(recorder.probe.notIsolated.load(ordering: .relaxed) == 0)
    }

    @Test("tells from 4 threads and awaited calls from 4 pool tasks never overlap and keep each sender's order")
    func tellsAndCallsNeverOverlap() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        let perSender = 5_000
        await withTaskGroup(of: Void.self) { group in
            // Senders 0–3: plain threads (DispatchQueue.concurrentPerform) telling.
            group.addTask {
                DispatchQueue.concurrentPerform(iterations: 4) { sender in
                    for i in 0..<perSender { recorder.tell { $0.record(i, from: sender) } }
                }
            }
            // Senders 4–7: tasks on the scheduler's workers awaiting calls (the inline path).
            for sender in 4..<8 {
                group.addTask(executorPreference: scheduler.taskExecutor) {
                    for i in 0..<perSender { await recorder.record(i, from: sender) }
                }
            }
        }
        // Every tell was made before this call (the group joined the telling threads).
        let count = await recorder.count
        #expect(count == 8 * perSender)
        for sender in 0..<8 {
            #expect(await recorder.values(from: sender) == Array(0..<perSender), "sender \(sender) out of order")
        }
        #expect(recorder.probe.overlaps.load(ordering: .relaxed) == 0)
        #expect(recorder.probe.notIsolated.load(ordering: .relaxed) == 0)
    }

    @Test("a told closure runs on a worker, isolated: preconditionIsolated and assumeIsolated pass inside it")
    func toldClosureIsIsolated() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        let facts = Mutex<(onWorker: Bool, isolated: Bool?)?>(nil)
        recorder.tell { actor in
            actor.preconditionIsolated()
            actor.assumeIsolated { _ in }
            facts.withLock { $0 = (Scheduler.currentWorkerIndex != nil, actor.executor.isIsolatingCurrentContext()) }
        }
        // The told closure runs on a worker, so wait for it rather than for a later call:
        // an optimised build drops the hop of an awaited read whose value is unused.
        #expect(waitUntil { facts.withLock { $0 } != nil })
        let seen = facts.withLock { $0 }
        #expect(seen?.onWorker == true)
        #expect(seen?.isolated == true)
    }

    @Test("an awaited call from a pool task to an idle actor runs inline on the caller's own thread, isolated")
    func awaitedCallRunsInline() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        let (inline, isolated) = await Task(executorPreference: scheduler.taskExecutor) {
            var inline = 0, isolated = 0
            for _ in 0..<1_000 {
                let before = UInt(pthread_self())   // no suspension between here and the call
                let inside = await recorder.whereAmI()
                if inside.thread == before, inside.inline { inline += 1 }
                if inside.isolated == true, inside.worker != nil { isolated += 1 }
            }
            return (inline, isolated)
        }.value
        #expect(inline == 1_000)
        #expect(isolated == 1_000)
        // Off the actor, the executor says no.
        #expect(recorder.executor.isIsolatingCurrentContext() == nil)
    }

    @Test("an actor calling an idle actor runs it inline too, and both stay isolated")
    func actorToActorCall() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let callee = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        let caller = Relay(executor: MNSerialExecutor(scheduler: scheduler), target: callee)
        let inline = await caller.relay(1_000)
        #expect(inline == 1_000)
        #expect(await callee.values() == Array(0..<1_000))
        #expect(callee.probe.overlaps.load(ordering: .relaxed) == 0)
        #expect(callee.probe.notIsolated.load(ordering: .relaxed) == 0)
    }

    @Test("after the scheduler shut down, told closures still run exactly once, in order, isolated, off the pool")
    func tellAfterShutdown() async throws {
        let scheduler = try makeScheduler(workers: 2)
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        for i in 0..<100 { recorder.tell { $0.record(i) } }
        scheduler.shutdown()
        #expect(scheduler.isShutDown)
        for i in 100..<1_100 { recorder.tell { $0.record(i) } }
        let facts = await recorder.whereAmI()   // after every tell above (same thread)
        #expect(await recorder.values() == Array(0..<1_100))
        #expect(facts.worker == nil)
        #expect(facts.isolated == true)
        #expect(recorder.probe.overlaps.load(ordering: .relaxed) == 0)
        #expect(recorder.probe.notIsolated.load(ordering: .relaxed) == 0)
    }

    @Test("on a DeterministicScheduler told closures run only when driven, all of them, in order, on the driving thread")
    func tellOnDeterministicScheduler() throws {
        let deterministic = DeterministicScheduler(seed: 7)
        let recorder = Recorder(executor: MNSerialExecutor(scheduler: deterministic.scheduler))
        let ran = Mutex<[Int]>([])
        for i in 0..<200 {
            recorder.tell { actor in
                actor.preconditionIsolated()   // the driving thread is recognised as isolated
                ran.withLock { $0.append(actor.executor.isIsolatingCurrentContext() == true ? i : -1) }
            }
        }
        #expect(ran.withLock { $0 }.isEmpty)
        #expect(deterministic.runnableCount == 1)   // one schedule for the whole batch
        try deterministic.runUntilQuiescent()
        #expect(ran.withLock { $0 } == Array(0..<200))
        #expect(recorder.executor.isIsolatingCurrentContext() == nil)   // no longer driving it
    }

    @Test("MNGlobalActor.shared.tell runs the closure once, on Scheduler.shared's workers, isolated to the global actor")
    func globalActorTell() async {
        let facts = Mutex<[(worker: Int?, isolated: Bool?)]>([])
        MNGlobalActor.shared.tell { actor in
            actor.preconditionIsolated()
            facts.withLock { $0.append((Scheduler.currentWorkerIndex, actor.executor.isIsolatingCurrentContext())) }
        }
        _ = await onGlobalActor()   // an awaited call after the tell (same thread: FIFO)
        let seen = facts.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.worker != nil)
        #expect(seen.first?.isolated == true)
    }

    @Test("two actors sharing one executor: each told closure runs exactly once, in order, with its own actor")
    func sharedExecutor() async throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let executor = MNSerialExecutor(scheduler: scheduler)
        let first = Recorder(executor: executor), second = Recorder(executor: executor)
        for i in 0..<2_000 {
            first.tell { $0.record(i) }     // the executor's bound actor: two-word entries
            second.tell { $0.record(-i) }   // the other one: boxed entries
        }
        #expect(await first.values() == Array(0..<2_000))
        #expect(await second.values() == (0..<2_000).map { -$0 })
        #expect(first.probe.notIsolated.load(ordering: .relaxed) == 0)
        #expect(second.probe.notIsolated.load(ordering: .relaxed) == 0)
    }

    @Test("a queued tell keeps its actor alive until it ran, then lets it go (no retain leaked or lost)")
    func tellRetainsActorUntilRun() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let executor = MNSerialExecutor(scheduler: deterministic.scheduler)
        weak var weakFirst: Recorder?
        weak var weakSecond: Recorder?
        do {
            let first = Recorder(executor: executor), second = Recorder(executor: executor)
            weakFirst = first
            weakSecond = second
            for i in 0..<10 {
                first.tell { $0.record(i) }
                second.tell { $0.record(i) }
            }
        }
        #expect(weakFirst != nil && weakSecond != nil, "queued tells hold their actors")
        try deterministic.runUntilQuiescent()
        #expect(weakFirst == nil && weakSecond == nil, "each tell released its actor once it ran")
    }

    @Test("a told closure's captures are released exactly once, after it ran (bound and boxed entries: tell consumes the closure)")
    func tellReleasesCapturesOnceAfterRun() throws {
        let deterministic = DeterministicScheduler(seed: 5)
        let executor = MNSerialExecutor(scheduler: deterministic.scheduler)
        let first = Recorder(executor: executor), second = Recorder(executor: executor)
        let freed = Atomic<Int>(0)
        var refs: [Tracked] = []
        for i in 0..<8 {
            let captured = Tracked(value: i) { freed.add(1, ordering: .relaxed) }
            refs.append(captured)
            if i % 2 == 0 {
                first.tell { $0.record(captured.value) }    // two-word entry
            } else {
                second.tell { $0.record(captured.value) }   // boxed entry
            }
        }
        let weakRefs = refs.map { WeakTracked($0) }
        refs = []
        #expect(freed.load(ordering: .relaxed) == 0, "queued closures keep their captures")
        #expect(weakRefs.allSatisfy { $0.object != nil })
        try deterministic.runUntilQuiescent()
        #expect(freed.load(ordering: .relaxed) == 8, "each capture released once its closure ran")
        #expect(weakRefs.allSatisfy { $0.object == nil })
        #expect(first.probe.overlaps.load(ordering: .relaxed) == 0)
    }

    @Test("an actor that owns its executor, freed by its last told closure's release inside the turn, leaves the executor alive to the turn's end, then frees it")
    func actorFreedByLastTellInsideTurn() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let marker = Recorder(executor: MNSerialExecutor(scheduler: scheduler))
        for round in 0..<200 {
            let actorFreed = DispatchSemaphore(value: 0)
            let markerRan = DispatchSemaphore(value: 0)
            weak var weakExecutor: MNSerialExecutor?
            do {
                let owner = ExecutorOwner(scheduler: scheduler) { actorFreed.signal() }
                weakExecutor = owner.executor
                for i in 0..<(1 + round % 4) { owner.tell { $0.count += i } }
            }   // the queued entries hold the only references to the actor now
            actorFreed.wait()   // the last entry's release freed it, on the worker, in the turn
            // One worker: the marker's turn starts only after that turn ended (and the
            // worker let go of the executor).
            marker.tell { _ in markerRan.signal() }
            markerRan.wait()
            #expect(weakExecutor == nil, "round \(round): the executor is freed once its turn ended")
        }
    }

    @Test("tell on an actor whose unownedExecutor is not its executor stops the process with a message")
    func tellRefusesMismatchedExecutor() async {
        await #expect(processExitsWith: .failure) {
            tellOnMismatchedActor()
        }
    }
}

/// Calls `target` from inside its own isolation (actor → actor) and reports the thread.
actor Relay: MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let target: Recorder
    init(executor: MNSerialExecutor, target: Recorder) {
        self.executor = executor
        self.target = target
    }

    /// Makes `n` pairs of awaited calls; returns how many of the second ran inline on
    /// this actor's thread.
    func relay(_ n: Int) async -> Int {
        var inline = 0
        for i in 0..<n {
            await target.record(i)
            preconditionIsolated()
            let before = UInt(pthread_self())   // no suspension between here and the call
            let inside = await target.whereAmI()
            if inside.thread == before, inside.inline { inline += 1 }
        }
        return inline
    }
}
