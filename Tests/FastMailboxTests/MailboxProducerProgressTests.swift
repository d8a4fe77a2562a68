import Testing
import Foundation
import Synchronization
import TestSupport
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

#if DEBUG  // every test here arms a test hook, which release builds compile out

/// Producers never wait for each other (ckshim.h, "Ready marks"): a sender stopped between
/// claiming its ring slot and publishing it delays only the consumer, at that one slot,
/// while every other sender finishes. (MailboxSenderLoadTests, in the stress target, runs
/// more sender threads than cores.) Serialized: both tests arm MPSCQueueTestHook's publish
/// point, which holds one queue for the whole process.
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
        MPSCQueueTestHook.armPublish(mailbox.box.queue) { parked.pass() }
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
        MPSCQueueTestHook.armPublish(cell.queue) { parked.pass() }
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
}
#endif
