import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import TestSupport

// Fault injection: each test injects one fault — behaviours throwing at
// random, stops while messages are in flight, a worker held inside a turn, shutdown under
// full load, ask timeouts racing replies, a sender descheduled between its closed check and
// its insert (MPSCQueueTestHook) — and asserts the outcome. Seeds are printed; they fix the
// random choices (the interleaving is the real scheduler's).

@Suite("Fault injection", .serialized) struct FaultInjectionTests {
    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["FASTMAILBOX_FAULT_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
    }

    @Test("behaviours that throw at random are restarted: every message is handed over exactly once, in order per sender")
    func randomThrowsRestartAndLoseNothing() throws {
        let seed = Self.seed()
        let system = try makeSystem()
        let seen = SignalingProbe<(sender: Int, seq: Int)>()
        let thrown = Atomic<Int>(0)
        let ref = try system.spawn(options: SpawnOptions(name: "thrower", mailboxCapacity: 4, supervisor: .restart(maxRestarts: Int.max, within: .seconds(1)))) { (m: Int, _) in
            seen.record((m >> 20, m & 0xFFFFF))
            var random = SeededRandom(seed: seed ^ UInt64(m))
            if random.percent() < 20 { thrown.wrappingAdd(1, ordering: .relaxed); throw TestFailure.boom }
        }
        let perSender = underThreadSanitizer ? 500 : 5_000
        runOnThreads(2) { sender in
            for seq in 0..<perSender { ref.tell(sender << 20 | seq) }
        }
        #expect(seen.waitForCount(2 * perSender, timeout: .seconds(30)), "seed \(seed): \(seen.count) handed over")
        let report = system.shutdown()
        for sender in 0..<2 {
            #expect(seen.values.filter { $0.sender == sender }.map(\.seq) == Array(0..<perSender), "seed \(seed): sender \(sender) out of order or lost")
        }
        #expect(thrown.load(ordering: .relaxed) > 0, "seed \(seed): no fault was injected")
        #expect(report.delivered == 2 * perSender && report.deadLettered == 0 && report.isBalanced, "seed \(seed): \(report)")
        print("fault: random throws: seed \(seed), \(thrown.load(ordering: .relaxed)) throws in \(2 * perSender) messages; \(report)")
    }

    @Test("a behaviour that throws under the stop strategy stops the actor: the rest is dead-lettered, nothing handed over after")
    func throwUnderStopStrategyDeadLettersTheRest() throws {
        let system = try makeSystem()
        let handled = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "fragile", mailboxCapacity: 4, supervisor: .stop)) { (m: Int, _) in
            handled.record(m)
            if m == 100 { throw TestFailure.boom }
        }
        for i in 0..<1_000 { ref.tell(i) }
        #expect(eventually { system.metrics.liveActors == 0 })
        let report = system.shutdown()
        #expect(handled.values == Array(0...100))
        #expect(report.delivered == 101 && report.deadLettered == 899 && report.isBalanced, "\(report)")
    }

    @Test("stops in flight: senders keep sending while the actor is stopped; each message is delivered or dead-lettered once, none sent after the stop is handled")
    func stopsInFlightBalance() throws {
        let sentAfterStopBit = 1 << 30
        for round in 0..<(underThreadSanitizer ? 4 : 10) {
            let mode: StopMode = round % 2 == 0 ? .immediately : .afterDrainingMailbox
            let system = try makeSystem()
            let stopReturned = Atomic<Bool>(false)
            let startedAfterStop = Atomic<Int>(0)
            let handledSentAfterStop = Atomic<Int>(0)
            let handled = Atomic<Int>(0)
            let firstHandled = DispatchSemaphore(value: 0)
            let ref = try system.spawn(options: SpawnOptions(name: "target-\(round)", mailboxCapacity: 4)) { (m: Int, _) in
                if stopReturned.load(ordering: .acquiring) { startedAfterStop.wrappingAdd(1, ordering: .relaxed) }
                if m & sentAfterStopBit != 0 { handledSentAfterStop.wrappingAdd(1, ordering: .relaxed) }
                if handled.wrappingAdd(1, ordering: .relaxed).newValue == 1 { firstHandled.signal() }
            }
            let sent = Atomic<Int>(0)
            let finished = DispatchGroup()
            let senders = (0..<3).map { _ in
                Thread {
                    for i in 0..<2_000 {
                        // A message told after the sender saw stop() return carries the bit.
                        ref.tell(stopReturned.load(ordering: .acquiring) ? i | sentAfterStopBit : i)
                        sent.wrappingAdd(1, ordering: .relaxed)
                    }
                    finished.leave()
                }
            }
            senders.forEach { _ in finished.enter() }
            senders.forEach { $0.start() }
            #expect(firstHandled.wait(timeout: .now() + 20) == .success)  // traffic is flowing
            ref.stop(mode)
            stopReturned.store(true, ordering: .releasing)
            #expect(finished.wait(timeout: .now() + 20) == .success)
            let report = system.shutdown()
            #expect(handledSentAfterStop.load(ordering: .relaxed) == 0, "round \(round) \(mode): a message told after stop() returned was handled")
            if mode == .immediately {
                // The message in hand when stop() returned may still start its call; no other may.
                #expect(startedAfterStop.load(ordering: .relaxed) <= 1, "round \(round): \(startedAfterStop.load(ordering: .relaxed)) calls started after stop")
            }
            #expect(report.sent == sent.load(ordering: .relaxed), "round \(round) \(mode): \(report)")
            #expect(report.delivered == handled.load(ordering: .relaxed), "round \(round) \(mode): \(report)")
            #expect(report.isBalanced && report.left == 0, "round \(round) \(mode): \(report)")
        }
    }

    @Test("a worker held inside a turn for a long time: the other worker keeps the rest running and shutdown returns within its bound")
    func workerHeldLongKeepsPoolAndShutdownBound() throws {
        let system = try makeSystem(workers: 2)
        let held = TestGate()
        let blocker = try system.spawn(options: SpawnOptions(name: "holder")) { (m: Int, _) in if m == 0 { held.pass() } }
        let echoes = SignalingProbe<Int>()
        let others = try (0..<8).map { i in try system.spawn(options: SpawnOptions(name: "other-\(i)", mailboxCapacity: 4)) { (m: Int, _) in echoes.record(m) } }
        blocker.tell(0)
        #expect(held.waitForArrival())
        for i in 1...5 { blocker.tell(i) }
        for i in 0..<800 { others[i % 8].tell(i) }  // one worker is held: the other runs them all
        #expect(echoes.waitForCount(800), "the pool stalled behind a held worker: \(echoes.count) of 800")
        let timeout = Duration.milliseconds(300)
        let start = ContinuousClock.now
        let report = system.shutdown(timeout: timeout)
        let took = ContinuousClock.now - start
        #expect(took < timeout + .seconds(2), "shutdown took \(took) with a \(timeout) timeout")
        #expect(report.workersNotStopped == 1 && report.actorsNotStopped == 1 && report.actorsNotStoppedNames == ["holder"], "\(report)")
        #expect(report.left == 5 && report.delivered == 801 && report.isBalanced, "\(report)")
        held.open()  // the turn ends: its mailbox's rest becomes dead letters on that thread
        #expect(eventually { system.deadLetters.count == 5 })
        #expect(eventually { system.scheduler.workersStillRunning == 0 })
    }

    @Test("shutdown under full load from threads and actors: nothing left, no worker stuck, books balance once senders stop")
    func shutdownUnderFullLoad() throws {
        for round in 0..<(underThreadSanitizer ? 2 : 5) {
            let system = try makeSystem()
            let told = Atomic<Int>(0)
            let delivered = Atomic<Int>(0)
            let loaded = DispatchSemaphore(value: 0)
            final class Ring: Sendable { let refs = Lock<[ActorRef<Int>]>([]) }
            let ring = Ring()
            let refs = try (0..<16).map { i in
                try system.spawn(options: SpawnOptions(name: "load-\(i)", mailboxCapacity: 4)) { (m: Int, _) in
                    if delivered.wrappingAdd(1, ordering: .relaxed).newValue == 20_001 { loaded.signal() }
                    if m > 0 {  // pass it on around the ring: actors keep sending until stopped
                        let next = ring.refs.withLock { $0[(i + 1) % $0.count] }
                        next.tell(m - 1)
                        told.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            }
            ring.refs.withLock { $0 = refs }
            let stopSending = Atomic<Bool>(false)
            let finished = DispatchGroup()
            let senders = (0..<2).map { t in
                Thread {
                    var i = 0
                    while !stopSending.load(ordering: .acquiring) {
                        refs[(t + i) % refs.count].tell(1_000)
                        told.wrappingAdd(1, ordering: .relaxed)
                        i += 1
                        if i % 64 == 0 { sched_yield() }
                    }
                    finished.leave()
                }
            }
            senders.forEach { _ in finished.enter() }
            senders.forEach { $0.start() }
            #expect(loaded.wait(timeout: .now() + 20) == .success)  // more than 20,000 delivered: full load
            let report = system.shutdown(timeout: .seconds(10))
            stopSending.store(true, ordering: .releasing)
            #expect(finished.wait(timeout: .now() + 20) == .success)
            #expect(report.left == 0 && report.actorsNotStopped == 0 && report.workersNotStopped == 0, "round \(round): \(report)")
            // The report is a snapshot taken while threads still send; after they stopped every
            // tell is delivered or dead-lettered exactly once.
            let total = system.metrics.delivered + system.deadLetters.count
            #expect(total == told.load(ordering: .relaxed), "round \(round): delivered+dead \(total) of \(told.load(ordering: .relaxed)) told")
            #expect(system.metrics.delivered == delivered.load(ordering: .relaxed), "round \(round)")
        }
    }

    @Test("ask timeouts racing replies: each ask resolves once, and every reply that lost the race is a dead letter")
    func askTimeoutsRacingReplies() async throws {
        let seed = Self.seed()
        let system = try makeSystem()
        let (replies, replySent) = AsyncStream.makeStream(of: Void.self)
        let answered = Atomic<Int>(0)
        let counter = try system.spawn(options: SpawnOptions(name: "slow-replier", mailboxCapacity: 4)) { (m: SlowMessage, _) in
            guard case .get(let replyTo) = m else { return }
            var random = SeededRandom(seed: seed ^ UInt64(answered.load(ordering: .relaxed)))
            usleep(UInt32(random.next() % 2_000))  // about the ask timeout: the two race
            replyTo.tell(1)
            answered.wrappingAdd(1, ordering: .relaxed)
            replySent.yield()
        }
        let asks = underThreadSanitizer ? 100 : 400
        var replied = 0, timedOut = 0
        var replyIterator = replies.makeAsyncIterator()
        for _ in 0..<asks {
            do {
                _ = try await counter.ask(timeout: .milliseconds(1)) { SlowMessage.get(replyTo: $0) }
                replied += 1
            } catch AskError.timedOut {
                timedOut += 1
            }
            await replyIterator.next()  // the reply was sent (to the asker or to dead letters)
        }
        #expect(replied + timedOut == asks)
        #expect(answered.load(ordering: .relaxed) == asks, "seed \(seed)")
        // Every request was answered; the answers whose ask had timed out went to dead letters.
        #expect(system.deadLetters.count == timedOut, "seed \(seed): \(system.deadLetters.count) dead letters, \(timedOut) timeouts")
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == asks, "seed \(seed): \(report)")
        #expect(replied > 0 && timedOut > 0, "seed \(seed): the race did not happen both ways (\(replied) replied, \(timedOut) timed out)")
        print("fault: ask races: seed \(seed), \(replied) replied, \(timedOut) timed out (late replies dead-lettered); \(report)")
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a sender descheduled between its closed check and its insert while the actor stops: its message is a dead letter")
    func descheduledSenderAcrossStop() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "stops-under-a-sender", mailboxCapacity: 4)) { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        #expect(probe.waitForCount(1))
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        let paused = TestGate()
        MPSCQueueTestHook.arm(cell.queue) { paused.pass() }
        let senderDone = DispatchSemaphore(value: 0)
        let sender = Thread { ref.tell(2); senderDone.signal() }
        sender.start()
        #expect(paused.waitForArrival())
        ref.stop()
        #expect(eventually { system.metrics.liveActors == 0 })  // stopped, mailbox closed and drained
        paused.open()  // the insert lands in the closed mailbox of a stopped actor
        #expect(senderDone.wait(timeout: .now() + 20) == .success)
        #expect(eventually { system.deadLetters.count == 1 }, "the late message was lost")
        let report = system.shutdown()
        #expect(probe.values == [1])
        #expect(report.delivered == 1 && report.deadLettered == 1 && report.isBalanced, "\(report)")
    }
#endif

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a sender descheduled before its insert while others overflow a tiny mailbox: everything arrives, in order per sender")
    func descheduledSenderDuringOverflow() throws {
        let system = try makeSystem()
        let seen = SignalingProbe<Int>()
        let gate = TestGate()
        let ref = try system.spawn(options: SpawnOptions(name: "overflowing", mailboxCapacity: 4)) { (m: Int, _) in
            if m == -1 { gate.pass(); return }
            seen.record(m)
        }
        ref.tell(-1)
        #expect(gate.waitForArrival())  // the actor is busy: the ring fills, the overflow is taken
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        let paused = TestGate()
        MPSCQueueTestHook.arm(cell.queue) { paused.pass() }
        let late = Thread { ref.tell(1_000_000) }
        late.start()
        #expect(paused.waitForArrival())
        for i in 0..<100 { ref.tell(i) }  // 3 in the ring, the rest in the overflow
        #expect(cell.mailbox.overflowSendCount > 0)
        gate.open()
        #expect(seen.waitForCount(100))
        paused.open()
        #expect(seen.waitForCount(101), "the descheduled sender's message was lost")
        #expect(Array(seen.values.prefix(100)) == Array(0..<100) && seen.values.last == 1_000_000)
        let report = system.shutdown()
        #expect(report.delivered == 102 && report.isBalanced, "\(report)")
    }
#endif
}
