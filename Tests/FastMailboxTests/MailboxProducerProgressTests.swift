import Testing
import Foundation
import Synchronization
import TestSupport
@testable import FastMailbox
@testable import MNScheduler

/// Producers never wait for each other (ckshim.h, "Ready marks"): a sender stopped between
/// claiming its ring slot and publishing it delays only the consumer, at that one slot,
/// while every other sender finishes. And with more sender threads than cores, a
/// mailbox keeps its throughput (no convoy of senders queued behind a preempted one).
@Suite("Mailbox producers", .serialized) struct MailboxProducerProgressTests {
    static let senders = 7
    static let perSender = underThreadSanitizer ? 2_000 : 20_000

    /// Message layout: sender in the high half, sequence number in the low half.
    static func message(_ sender: Int, _ seq: Int) -> UInt64 { UInt64(sender) << 32 | UInt64(seq) }

    /// Checks per-sender order and returns how many messages `values` holds per sender.
    static func checkOrder(_ values: [UInt64], senders: Int) -> (perSender: [Int], errors: [String]) {
        var next = [Int](repeating: 0, count: senders)
        var errors: [String] = []
        for value in values {
            let sender = Int(value >> 32), seq = Int(value & 0xffff_ffff)
            if seq != next[sender], errors.count < 5 { errors.append("sender \(sender): expected \(next[sender]), got \(seq)") }
            next[sender] = seq + 1
        }
        return (next, errors)
    }

    @Test("a sender parked between claiming its slot and publishing it stops no other sender; its message arrives once it goes on, in order")
    func parkedSenderStopsNoOtherSender() throws {
        let mailbox = try Mailbox<UInt64>(capacity: 64)
        let parked = TestGate()
        MPSCQueueTestHook.armPublish(mailbox.queue) { parked.pass() }
        let parkedSender = Thread { _ = mailbox.send(Self.message(Self.senders, 0)) }
        parkedSender.start()
        #expect(parked.waitForArrival(), "the first send did not reach its publish")
        // Every other sender runs to the end while the first sits on its claimed slot.
        let finished = DispatchSemaphore(value: 0)
        let others = Thread {
            runOnThreads(Self.senders) { sender in
                for seq in 0..<Self.perSender { _ = mailbox.send(Self.message(sender, seq)) }
            }
            finished.signal()
        }
        others.start()
        let done = finished.wait(timeout: .now() + 60) == .success
        #expect(done, "senders waited for the parked one")
        // The consumer waits at the parked slot only: nothing behind it is handed out yet.
        var early: [UInt64] = []
        #expect(mailbox.drain(max: 1024) { early.append($0) } == .more)
        #expect(early.isEmpty, "a message behind the unpublished slot was handed out first")
        #expect(mailbox.count == Self.senders * Self.perSender + 1)
        parked.open()
        if !done { _ = finished.wait(timeout: .now() + 60) }
        var all: [UInt64] = []
        var spins = 0
        while all.count < Self.senders * Self.perSender + 1, spins < 1_000_000 {
            if mailbox.drain(max: 1024, { all.append($0) }) == .empty { spins += 1 }
        }
        #expect(all.first == Self.message(Self.senders, 0), "the parked sender's message comes first: it took the first ticket")
        let (counts, errors) = Self.checkOrder(all, senders: Self.senders + 1)
        #expect(errors.isEmpty, "\(errors)")
        #expect(counts == [Int](repeating: Self.perSender, count: Self.senders) + [1])
    }

    @Test("an actor keeps receiving from every other sender while one sender is parked before its publish, and then gets that one's message too")
    func parkedSenderToAnActor() throws {
        let system = try makeSystem()
        let total = Self.senders * Self.perSender + 1
        let received = Atomic<Int>(0)
        let allIn = DispatchSemaphore(value: 0)
        let order = Lock<[Int]>([Int](repeating: 0, count: Self.senders + 1))
        let errors = Lock<[String]>([])
        let ref = try system.spawn(options: SpawnOptions(name: "sink", mailboxCapacity: 64)) { (value: UInt64, _) in
            let sender = Int(value >> 32), seq = Int(value & 0xffff_ffff)
            order.withLock { next in
                if seq != next[sender] { errors.withLock { if $0.count < 5 { $0.append("sender \(sender): expected \(next[sender]), got \(seq)") } } }
                next[sender] = seq + 1
            }
            if received.wrappingAdd(1, ordering: .relaxed).newValue == total { allIn.signal() }
        }
        ref.tell(Self.message(Self.senders, 0))  // the ring exists; the first turn has run or will
        #expect(eventually { received.load(ordering: .relaxed) == 1 })
        let cell = try #require(ref.identity as? ActorCellBase<UInt64>)
        let parked = TestGate()
        MPSCQueueTestHook.armPublish(cell.mailbox.queue) { parked.pass() }
        let parkedSender = Thread { ref.tell(Self.message(Self.senders, 1)) }
        parkedSender.start()
        #expect(parked.waitForArrival())
        let finished = DispatchSemaphore(value: 0)
        Thread {
            runOnThreads(Self.senders) { sender in
                for seq in 0..<Self.perSender { ref.tell(Self.message(sender, seq)) }
            }
            finished.signal()
        }.start()
        let done = finished.wait(timeout: .now() + 60) == .success
        #expect(done, "senders waited for the parked one")
        #expect(received.load(ordering: .relaxed) == 1, "a message behind the unpublished slot was delivered first")
        parked.open()
        #expect(allIn.wait(timeout: .now() + 60) == .success, "\(received.load(ordering: .relaxed)) of \(total + 1) delivered")
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 })")
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == total + 1, "\(report)")
    }

    /// Rounds of the many-senders load; fewer under a sanitizer.
    static let rounds = runningUnderSanitizer() ? 10 : 200
    static let loadSenders = 8
    static let loadPerSender = runningUnderSanitizer() ? 5_000 : 50_000
    /// The bound on one round: a round with a convoy of senders (each waiting its turn to
    /// commit behind a preempted one) runs for minutes; one without takes a fraction of this.
    static let roundLimit: Double = runningUnderSanitizer() ? 20 : 2

    @Test("8 sender threads on 2 cores into a 64-slot mailbox drained by polling: every round delivers everything, in order, within the bound",
          .timeLimit(.minutes(10)))
    func manySendersPollingConsumer() throws {
        var worst = 0.0
        for round in 0..<Self.rounds {
            let mailbox = try Mailbox<UInt64>(capacity: 64)
            let total = Self.loadSenders * Self.loadPerSender
            let start = DispatchTime.now()
            let producersDone = Atomic<Bool>(false)
            Thread {
                runOnThreads(Self.loadSenders) { sender in
                    for seq in 0..<Self.loadPerSender { _ = mailbox.send(Self.message(sender, seq)) }
                }
                producersDone.store(true, ordering: .releasing)
            }.start()
            var next = [Int](repeating: 0, count: Self.loadSenders)
            var received = 0
            var errors: [String] = []
            let deadline = start.uptimeNanoseconds + UInt64(Self.roundLimit * 4e9)
            while received < total, DispatchTime.now().uptimeNanoseconds < deadline {
                _ = mailbox.drain(max: 1024) { value in
                    let sender = Int(value >> 32), seq = Int(value & 0xffff_ffff)
                    if seq != next[sender], errors.count < 5 { errors.append("sender \(sender): expected \(next[sender]), got \(seq)") }
                    next[sender] = seq + 1
                    received += 1
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            worst = max(worst, seconds)
            #expect(received == total && errors.isEmpty, "round \(round): \(received) of \(total) in \(seconds) s; \(errors)")
            #expect(seconds < Self.roundLimit, "round \(round): \(seconds) s")
            while !producersDone.load(ordering: .acquiring) { usleep(1_000) }
            if received != total { break }
        }
        print("mailbox producers: \(Self.rounds) rounds of \(Self.loadSenders) × \(Self.loadPerSender), worst \(worst) s")
    }

    @Test("8 sender threads on 2 cores telling one actor (a 64-slot mailbox): every round delivers everything, in order, within the bound",
          .timeLimit(.minutes(10)))
    func manySendersActorConsumer() throws {
        let system = try makeSystem()
        defer { _ = system.shutdown() }
        let rounds = runningUnderSanitizer() ? 3 : 20
        var worst = 0.0
        for round in 0..<rounds {
            let total = Self.loadSenders * Self.loadPerSender
            let received = Atomic<Int>(0)
            let allIn = DispatchSemaphore(value: 0)
            let errors = Atomic<Int>(0)
            nonisolated(unsafe) var next = [Int](repeating: 0, count: Self.loadSenders)  // the actor's alone
            let ref = try system.spawn(options: SpawnOptions(name: "sink-\(round)", mailboxCapacity: 64)) { (value: UInt64, _) in
                let sender = Int(value >> 32), seq = Int(value & 0xffff_ffff)
                if seq != next[sender] { errors.wrappingAdd(1, ordering: .relaxed) }
                next[sender] = seq + 1
                if received.wrappingAdd(1, ordering: .relaxed).newValue == total { allIn.signal() }
            }
            let start = DispatchTime.now()
            runOnThreads(Self.loadSenders) { sender in
                for seq in 0..<Self.loadPerSender { ref.tell(Self.message(sender, seq)) }
            }
            let inTime = allIn.wait(timeout: start + Self.roundLimit * 4) == .success
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            worst = max(worst, seconds)
            #expect(inTime, "round \(round): \(received.load(ordering: .relaxed)) of \(total)")
            #expect(errors.load(ordering: .relaxed) == 0, "round \(round): messages out of order")
            #expect(seconds < Self.roundLimit, "round \(round): \(seconds) s")
            ref.stop()
            if !inTime { break }
        }
        print("mailbox producers (actor): \(rounds) rounds of \(Self.loadSenders) × \(Self.loadPerSender), worst \(worst) s")
    }
}
