import Testing
import TestSupport
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Shutdown accounting", .serialized) struct ShutdownAccountingTests {
    @Test("shutdown called from an actor's turn on a real scheduler returns a snapshot at once and finishes the shutdown once the turn ends (it trapped)")
    func shutdownFromATurnOnWorkers() throws {
        let system = try makeSystem()
        let reports = Probe<ShutdownReport>()
        let delivered = Probe<Int>()
        let other = try system.spawn(options: SpawnOptions(name: "other")) { (n: Int, _) in delivered.record(n) }
        let caller = try system.spawn(options: SpawnOptions(name: "caller")) { (_: Int, context: ActorContext<Int>) in
            reports.record(context.system.shutdown())
        }
        for n in 0..<100 { other.tell(n) }
        caller.tell(1)
        #expect(eventually { reports.count == 1 })
        let snapshot = try #require(reports.values.first)
        #expect(snapshot.actorsNotStopped >= 1 && snapshot.actorsNotStoppedNames.contains("caller"), "\(snapshot)")
        #expect(snapshot.workersNotStopped == 0)
        // From outside: waits for the shutdown the turn started and returns its final report.
        let final = system.shutdown()
        #expect(final.isBalanced && final.actorsNotStopped == 0 && final.workersNotStopped == 0, "\(final)")
        #expect(final.delivered + final.deadLettered == 101, "\(final)")
        #expect(system.scheduler.isShutDown)
        #expect(throws: ActorSystemError.shutDown) { try system.spawn { (_: Int, _) in } }
    }

    @Test("a sequential actor whose body ends with messages queued has them all dead-lettered before shutdown returns")
    func sequentialBodyEndsWithQueuedMessages() async throws {
        for ending in ["returns", "throws", "stopped"] {
            let system = try makeSystem()
            let started = TestGate()
            let ref: ActorRef<Int> = try system.spawn(options: SpawnOptions(name: "short-lived-\(ending)")) { inbox in
                _ = try await inbox.receive()
                started.pass()   // the body holds here while the test fills the mailbox
                if ending == "throws" { throw TestFailure.boom }
            }
            ref.tell(0)
            #expect(started.waitForArrival())
            let n = 20_000
            for i in 1...n { ref.tell(i) }
            if ending == "stopped" { ref.stop() }
            started.open()
            let report = system.shutdown(timeout: .seconds(20))
            #expect(report.sent == n + 1, "\(ending): \(report)")
            #expect(report.delivered + report.deadLettered == n + 1, "\(ending): \(report)")
            #expect(report.left == 0 && report.actorsNotStopped == 0, "\(ending): \(report)")
            #expect(report.isBalanced, "\(ending): \(report)")
        }
    }

    @Test("a sequential actor whose body returns with messages queued dead-letters every one of them before it leaves the registry")
    func sequentialLeavesRegistryOnlyWhenDrained() throws {
        let system = try makeSystem()
        let started = TestGate()
        let ref: ActorRef<Int> = try system.spawn(options: SpawnOptions(name: "leaver")) { inbox in
            _ = try await inbox.receive()
            started.pass()
        }
        ref.tell(0)
        #expect(started.waitForArrival())
        let n = 20_000
        for i in 1...n { ref.tell(i) }
        started.open()
        // No shutdown: the actor must have accounted for everything by the time it is gone.
        #expect(eventually { system.metrics.liveActors == 0 })
        #expect(system.deadLetters.count == n)
        #expect(system.shutdown().isBalanced)
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a tell that passed the closed check and inserts after shutdown finished is dead-lettered, not lost")
    func tellRacingShutdownIsDeadLettered() throws {
        let system = try makeSystem()
        let delivered = DispatchSemaphore(value: 0)
        let ref = try system.spawn(options: SpawnOptions(name: "late")) { (m: Int, _) in delivered.signal() }
        ref.tell(1)
        #expect(delivered.wait(timeout: .now() + 20) == .success)
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        let paused = TestGate()
        MPSCQueueTestHook.arm(cell.queue) { paused.pass() }  // the sender stops after its check
        let senderDone = DispatchSemaphore(value: 0)
        let sender = Thread { ref.tell(2); senderDone.signal() }
        sender.start()
        #expect(paused.waitForArrival())
        let report = system.shutdown(timeout: .seconds(5))  // actor stops, workers are joined
        #expect(report.delivered == 1 && report.isBalanced, "\(report)")
        paused.open()  // the sender inserts into the closed, drained mailbox of a stopped actor
        #expect(senderDone.wait(timeout: .now() + 20) == .success)
        #expect(system.deadLetters.count == 1)
        #expect(system.metrics.delivered == 1)
    }
#endif

    @Test("tells racing shutdown from many threads are each delivered or dead-lettered exactly once")
    func tellsRacingShutdownBalance() throws {
        for _ in 0..<20 {
            let system = try makeSystem()
            let refs = try (0..<4).map { i in try system.spawn(options: SpawnOptions(name: "r\(i)")) { (_: Int, _) in } }
            let sent = Atomic<Int>(0)
            let go = Atomic<Bool>(false)
            let finished = DispatchGroup()
            let senders = (0..<4).map { t in
                Thread {
                    while !go.load(ordering: .acquiring) {}  // the start line: all senders race shutdown
                    for i in 0..<2_000 { refs[(t + i) % 4].tell(i); sent.wrappingAdd(1, ordering: .relaxed) }
                    finished.leave()
                }
            }
            senders.forEach { _ in finished.enter() }
            senders.forEach { $0.start() }
            go.store(true, ordering: .releasing)
            let report = system.shutdown(timeout: .seconds(10))
            #expect(finished.wait(timeout: .now() + 20) == .success)
            // The report is a snapshot taken while senders still send, and balances even
            // so (ActorSystem.accountingReport); the books balance once they stop too.
            #expect(report.left == 0 && report.actorsNotStopped == 0 && report.isBalanced, "\(report)")
            let total = system.metrics.delivered + system.deadLetters.count
            #expect(total == sent.load(ordering: .relaxed), "delivered+dead \(total) of \(sent.load(ordering: .relaxed)) sent")
        }
    }

    @Test("stashed messages are counted once: dead-lettered at stop, delivered once after unstashAll")
    func stashCountsOnce() throws {
        // Stash all 10, shut down: 0 delivered, 10 dead letters.
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let ref = try system.spawn(options: SpawnOptions(name: "stasher")) { (m: Int, context: ActorContext<Int>) in context.stash(m) }
        for i in 0..<10 { ref.tell(i) }
        try deterministic.runUntilQuiescent()
        #expect(ref.mailboxDepth == 0)
        let report = system.shutdown()
        #expect(report.delivered == 0 && report.deadLettered == 10 && report.sent == 10, "\(report)")

        // Stash 5, unstashAll on the 6th: 6 delivered.
        let deterministic2 = DeterministicScheduler(seed: 2)
        let system2 = makeDeterministicSystem(deterministic2)
        let seen = Probe<Int>()
        let unstashed = Atomic<Bool>(false)
        let ref2 = try system2.spawn(options: SpawnOptions(name: "unstasher")) { (m: Int, context: ActorContext<Int>) in
            if m < 5, !unstashed.load(ordering: .relaxed) {
                context.stash(m)
            } else {
                seen.record(m)
                if m == 5 { unstashed.store(true, ordering: .relaxed); context.unstashAll() }
            }
        }
        for i in 0..<6 { ref2.tell(i) }
        try deterministic2.runUntilQuiescent()
        #expect(seen.count == 6)
        let report2 = system2.shutdown()
        #expect(report2.delivered == 6 && report2.deadLettered == 0 && report2.sent == 6, "\(report2)")
    }

    @Test("delivered counts stay exact, live and at shutdown, through stash, unstash, messages queued behind unstashed ones, a watch's message and a stop")
    func deliveredCountsThroughEveryPath() throws {
        // An event actor's delivered count is derived from its mailbox's count of messages
        // taken (ActorCellBase, "Accounting"); each path off the common one adjusts it.
        let deterministic = DeterministicScheduler(seed: 11, throughput: 64)  // 6...9 in 5's turn
        let system = makeDeterministicSystem(deterministic)
        let handled = Atomic<Int>(0)
        let unstashed = Atomic<Bool>(false)
        let watched = try system.spawn(options: SpawnOptions(name: "watched")) { (_: Int, _: ActorContext<Int>) in }
        let ref = try system.spawn(options: SpawnOptions(name: "counter")) { (m: Int, context: ActorContext<Int>) in
            if (0..<5).contains(m), !unstashed.load(ordering: .relaxed) { context.stash(m); return }
            handled.wrappingAdd(1, ordering: .relaxed)
            if m == -1 { context.watch(watched, with: -2) }
            if m == 5 { unstashed.store(true, ordering: .relaxed); context.unstashAll() }
        }
        ref.tell(-1)
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.delivered == 1)
        for i in 0..<5 { ref.tell(i) }  // all stashed: handed over, then handed back
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.delivered == handled.load(ordering: .relaxed), "stash hands back")
        for i in 5..<10 { ref.tell(i) }  // 5 unstashes 0...4; 6...9 queue behind them in the same turn
        try deterministic.runUntilQuiescent()
        #expect(handled.load(ordering: .relaxed) == 1 + 10)
        #expect(system.metrics.delivered == 1 + 10, "unstashed and queued-behind messages counted once")
        watched.stop()  // the watch's message (-2) is handed over without coming from the mailbox
        try deterministic.runUntilQuiescent()
        #expect(handled.load(ordering: .relaxed) == 1 + 10 + 1)
        #expect(system.metrics.delivered == 1 + 10 + 1, "the watch's message counted")
        for i in 10..<15 { ref.tell(i) }
        ref.stop()  // before the turn: the five queued become dead letters
        try deterministic.runUntilQuiescent()
        let report = system.shutdown()
        #expect(report.delivered == 1 + 10 + 1 && report.deadLettered == 5 && report.isBalanced, "\(report)")
        #expect(system.metrics.delivered == report.delivered)
    }

    @Test("a stuck actor's stashed messages are reported as left")
    func stuckActorStashIsLeft() throws {
        let system = try makeSystem()
        let gate = TestGate()
        let ref = try system.spawn(options: SpawnOptions(name: "stuck-stasher")) { (m: Int, context: ActorContext<Int>) in
            if m < 3 { context.stash(m) } else if m == 3 { gate.pass() }
        }
        for i in 0..<6 { ref.tell(i) }
        #expect(gate.waitForArrival())
        let report = system.shutdown(timeout: .milliseconds(100))
        #expect(report.actorsNotStopped == 1)
        #expect(report.left == 3 + 2, "3 stashed + 2 queued: \(report)")
        #expect(report.isBalanced, "\(report)")
        gate.open()
        #expect(eventually { system.deadLetters.count == 5 })
    }

    @Test("shutdown returns soon after its timeout when a turn blocks, and reports the stuck worker and actor")
    func shutdownTimeoutIsABound() throws {
        let system = try makeSystem()
        let gate = TestGate()
        let ref = try system.spawn(options: SpawnOptions(name: "blocker")) { (m: Int, _) in if m == 0 { gate.pass() } }
        for i in 0..<10 { ref.tell(i) }
        #expect(gate.waitForArrival())
        let start = ContinuousClock.now
        // Long enough for the idle worker to stop on a loaded machine, beside other tests.
        let report = system.shutdown(timeout: .seconds(1))
        let took = ContinuousClock.now - start
        #expect(took < .seconds(5), "shutdown took \(took)")  // it must not join the stuck worker
        #expect(report.workersNotStopped == 1 && report.actorsNotStopped == 1, "\(report)")
        #expect(report.actorsNotStoppedNames == ["blocker"])
        #expect(report.left == 9 && report.isBalanced, "\(report)")
        gate.open()  // the turn ends later: the rest becomes dead letters on that thread
        #expect(eventually { system.deadLetters.count == 9 })
        #expect(eventually { system.scheduler.workersStillRunning == 0 })
    }

    @Test("after shutdown the system, its cells and mailboxes are freed despite refs held in actors")
    func noCyclesSurviveShutdown() async throws {
        weak var weakSystem: ActorSystem?
        weak var weakCell: AnyObject?
        do {
            let system = try makeSystem()
            weakSystem = system
            final class SelfRef: EventActor {
                var me: ActorRef<Int>?
                func receive(_ message: Int, context: ActorContext<Int>) { me = context.myself }
            }
            let selfRef = try system.spawn(options: SpawnOptions(name: "self")) { SelfRef() }
            selfRef.tell(1)
            final class Box: @unchecked Sendable { var other: ActorRef<Int>? }
            let boxA = Box(), boxB = Box()
            let a = try system.spawn(options: SpawnOptions(name: "a")) { (m: Int, _) in if m > 0 { boxA.other?.tell(m - 1) } }
            let b = try system.spawn(options: SpawnOptions(name: "b")) { (m: Int, _) in if m > 0 { boxB.other?.tell(m - 1) } }
            boxA.other = b
            boxB.other = a
            a.tell(10)
            let single = try system.singleton(key: "one") { try system.spawn { Counter() } }
            _ = try await single.ask { .get(replyTo: $0) }
            weakCell = selfRef.identity as AnyObject
            let report = system.shutdown()
            #expect(report.isBalanced, "\(report)")
        }
        #expect(await eventually { weakSystem == nil && weakCell == nil }, "the system or a cell is still alive after shutdown")
    }

    // MARK: the report against tells racing it (N3), metrics after it (N2)

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a tell refused between any two of the report's reads leaves the report balanced (deterministic)")
    func refusedTellBetweenTheReportsReads() throws {
        let system = try makeSystem()
        let ref = try system.spawn(options: SpawnOptions(name: "target")) { (_: Int, _) in }
        for i in 0..<10 { ref.tell(i) }
        let refused = Atomic<Int>(0)
        // Every mailbox is closed by the time the report is read: each tell here is refused
        // (a dead letter never queued), on the thread that builds the report, between reads.
        ShutdownReportTestHook.arm(for: system) {
            ref.tell(-1)
            refused.wrappingAdd(1, ordering: .relaxed)
        }
        defer { ShutdownReportTestHook.disarm() }
        let report = system.shutdown()
        #expect(refused.load(ordering: .relaxed) >= 2, "the hook ran between the reads")
        #expect(report.isBalanced, "\(report)")
        #expect(report.delivered == 10 && report.left == 0, "\(report)")
        let afterwards = system.metrics
        #expect(afterwards.delivered + afterwards.deadLetters.total == system.acceptedTotal)
        #expect(afterwards.deadLetters.total == refused.load(ordering: .relaxed))
    }
#endif

    @Test("senders that keep telling through the whole shutdown: every report is balanced")
    func reportsBalanceWhileSendersTellThroughShutdown() throws {
        let rounds = runningUnderSanitizer() ? 10 : 40
        var unbalanced: [String] = []
        for round in 0..<rounds {
            let system = try makeSystem()
            let refs = try (0..<4).map { i in try system.spawn(options: SpawnOptions(name: "r\(i)")) { (_: Int, _) in } }
            let sent = Atomic<Int>(0)
            let go = Atomic<Bool>(false)
            let done = Atomic<Bool>(false)
            let finished = DispatchGroup()
            let senders = (0..<4).map { t in
                Thread {
                    while !go.load(ordering: .acquiring) {}
                    var i = 0
                    // Until shutdown has returned, and a little beyond: every read of the
                    // report races tells, delivered ones first, then refused ones.
                    while !done.load(ordering: .acquiring) || i % 1_000 != 0 {
                        refs[(t + i) % 4].tell(i)
                        sent.wrappingAdd(1, ordering: .relaxed)
                        i += 1
                    }
                    finished.leave()
                }
            }
            senders.forEach { _ in finished.enter() }
            senders.forEach { $0.start() }
            go.store(true, ordering: .releasing)
            usleep(UInt32(round % 5) * 200)  // shutdown at different points of the flood
            let report = system.shutdown(timeout: .seconds(10))
            done.store(true, ordering: .releasing)
            #expect(finished.wait(timeout: .now() + 20) == .success)
            if !report.isBalanced || report.left != 0 || report.actorsNotStopped != 0 { unbalanced.append("round \(round): \(report)") }
            let total = system.metrics.delivered + system.deadLetters.count
            #expect(total == sent.load(ordering: .relaxed), "round \(round): delivered+dead \(total) of \(sent.load(ordering: .relaxed)) sent")
        }
        #expect(unbalanced.isEmpty, "\(unbalanced.count) of \(rounds) reports off: \(unbalanced.prefix(5))")
    }

    @Test("metrics read after a shutdown agree with its report, an actor stuck in a turn included, and stay exact once that turn ends")
    func metricsAfterShutdownAgreeWithTheReport() throws {
        let system = try makeSystem()
        let gate = TestGate()
        let ref = try system.spawn(options: SpawnOptions(name: "stuck")) { (m: Int, _) in if m == 0 { gate.pass() } }
        for i in 0..<11 { ref.tell(i) }
        #expect(gate.waitForArrival())
        let report = system.shutdown(timeout: .milliseconds(100))
        #expect(report.delivered == 1 && report.left == 10 && report.deadLettered == 0 && report.sent == 11, "\(report)")
        #expect(report.actorsNotStopped == 1 && report.isBalanced, "\(report)")
        let metrics = system.metrics
        #expect(metrics.delivered == report.delivered, "\(metrics) after \(report)")
        #expect(metrics.deadLetters.total == report.deadLettered, "\(metrics) after \(report)")
        #expect(metrics.liveActors == report.actorsNotStopped, "\(metrics) after \(report)")
        #expect(system.acceptedTotal == report.sent)
        gate.open()  // the turn ends: the 10 left become dead letters, the actor stops
        #expect(eventually { system.metrics.liveActors == 0 })
        let final = system.metrics
        #expect(final.delivered == 1 && final.deadLetters.total == 10, "\(final)")
        #expect(system.acceptedTotal == 11 && system.metrics.delivered == 1)
    }
}
