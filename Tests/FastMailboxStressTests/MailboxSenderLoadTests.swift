import Testing
import Foundation
import Synchronization
import TestSupport
import FastMailboxTestSupport
@testable import FastMailbox
@testable import MNScheduler

/// With more sender threads than cores, a mailbox keeps delivering: no convoy of senders
/// queued behind a preempted one (ckshim.h, "Ready marks"). The rounds assert delivery and
/// order, not speed: a round that stops delivering fails at a deadline far above any normal
/// run time. The deterministic form of this property is MailboxProducerProgressTests (a
/// sender parked between claim and publish stops no other sender).
@Suite("Mailbox under many senders", .serialized) struct MailboxSenderLoadTests {
    /// Message layout: sender in the high half, sequence number in the low half.
    static func message(_ sender: Int, _ seq: Int) -> UInt64 { UInt64(sender) << 32 | UInt64(seq) }

    /// Rounds of the many-senders load; fewer under a sanitizer.
    static let rounds = runningUnderSanitizer() ? 5 : 50
    static let loadSenders = 8
    static let loadPerSender = runningUnderSanitizer() ? 5_000 : 50_000
    /// The deadline of one round, in seconds: a hang detector, not a speed bound (the
    /// machine is shared; speed lives in the benchmarks).
    static let roundDeadline: Double = 60

    @Test("8 sender threads on 2 cores into a 64-slot mailbox drained by polling: every round delivers everything, in order",
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
            let deadline = start.uptimeNanoseconds + UInt64(Self.roundDeadline * 1e9)
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
            while !producersDone.load(ordering: .acquiring) { usleep(1_000) }
            if received != total { break }
        }
        print("mailbox producers: \(Self.rounds) rounds of \(Self.loadSenders) × \(Self.loadPerSender), worst \(worst) s")
    }

    @Test("8 sender threads on 2 cores telling one actor (a 64-slot mailbox): every round delivers everything, in order",
          .timeLimit(.minutes(10)))
    func manySendersActorConsumer() throws {
        let system = try makeSystem()
        defer { _ = system.shutdown() }
        let rounds = runningUnderSanitizer() ? 3 : 10
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
            let inTime = allIn.wait(timeout: start + Self.roundDeadline) == .success
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            worst = max(worst, seconds)
            #expect(inTime, "round \(round): \(received.load(ordering: .relaxed)) of \(total)")
            #expect(errors.load(ordering: .relaxed) == 0, "round \(round): messages out of order")
            ref.stop()
            if !inTime { break }
        }
        print("mailbox producers (actor): \(rounds) rounds of \(Self.loadSenders) × \(Self.loadPerSender), worst \(worst) s")
    }
}
