import Testing
import Foundation
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport

/// Hunts for lost, duplicated and reordered messages with many real threads.
///
/// P producer threads each send M sequenced messages; one consumer thread runs exactly as
/// an actor would: it sleeps until a send reports `becameNonEmpty`, then drains in batches
/// until drain says `.empty`. A lost wake-up hangs (caught by the time limit), a lost
/// message fails the count, a duplicate or reordering fails the per-sender sequence check,
/// and a spurious or missing `becameNonEmpty` fails "wake-ups == empties" (every wake-up
/// starts exactly one consumer turn, and every turn ends with `.empty`).
@Suite("Mailbox stress", .serialized) struct MailboxStressTests {
    struct Result { var received = 0; var wakeUps = 0; var empties = 0; var errors: [String] = [] }

    static func run<M: Sendable>(
        producers: Int, perProducer: Int, capacity: Int,
        make: @escaping @Sendable (_ producer: Int, _ seq: Int) -> M,
        unpack: @escaping @Sendable (M) -> (producer: Int, seq: Int)
    ) throws -> Result {
        let mailbox = try Mailbox<M>(capacity: capacity)
        let wake = DispatchSemaphore(value: 0)
        let wakeUps = Atomic<Int>(0)
        let total = producers * perProducer
        nonisolated(unsafe) var result = Result()
        let consumerDone = DispatchSemaphore(value: 0)
        let consumer = Thread {
            var next = [Int](repeating: 0, count: producers)
            while result.received < total {
                wake.wait()
                while true {
                    let outcome = mailbox.drain(max: 64) { message in
                        let (p, seq) = unpack(message)
                        if seq != next[p], result.errors.count < 5 {
                            result.errors.append("producer \(p): expected \(next[p]), got \(seq)")
                        }
                        next[p] = seq + 1
                        result.received += 1
                    }
                    if outcome == .empty { result.empties += 1; break }
                }
            }
            consumerDone.signal()
        }
        consumer.start()
        runOnThreads(producers) { p in
            for seq in 0..<perProducer {
                if mailbox.send(make(p, seq)).becameNonEmpty {
                    wakeUps.wrappingAdd(1, ordering: .relaxed)
                    wake.signal()
                }
            }
        }
        consumerDone.wait()
        // A producer may have claimed the consumer after the consumer had already taken its
        // message (it drains whatever is committed, then goes idle): that wake-up starts one
        // more turn, which must find the mailbox empty. Run those turns now.
        while wake.wait(timeout: .now()) == .success {
            let outcome = mailbox.drain(max: 64) { _ in result.errors.append("a message after the last one") }
            if outcome == .empty { result.empties += 1 }
        }
        result.wakeUps = wakeUps.load(ordering: .relaxed)
        #expect(mailbox.count == 0)
        return result
    }

    static let totalPerRun = underThreadSanitizer ? 8_000 : 64_000

    @Test("P producers × M sequenced word messages: exact count, no duplicates, per-sender order",
          .timeLimit(.minutes(5)),
          arguments: [1, 2, 4, 8, 16], [4, 8, 1024])
    func wordMessages(producers: Int, capacity: Int) throws {
        let m = Self.totalPerRun / producers
        let r = try Self.run(producers: producers, perProducer: m, capacity: capacity,
                             make: { UInt64($0) << 32 | UInt64($1) },
                             unpack: { (Int($0 >> 32), Int($0 & 0xffff_ffff)) })
        #expect(r.errors.isEmpty, "\(r.errors)")
        #expect(r.received == producers * m)
        #expect(r.wakeUps == r.empties, "each empty → non-empty transition is reported exactly once")
    }

    struct Boxed: Sendable { let producer: Int; let seq: Int; let pad: String }

    @Test("boxed and object messages survive the same stress without loss or leak",
          .timeLimit(.minutes(2)), arguments: [4, 16])
    func boxedAndObjectMessages(producers: Int) throws {
        let m = Self.totalPerRun / 4 / producers
        let boxed = try Self.run(producers: producers, perProducer: m, capacity: 8,
                                 make: { Boxed(producer: $0, seq: $1, pad: "x") },
                                 unpack: { ($0.producer, $0.seq) })
        #expect(boxed.errors.isEmpty, "\(boxed.errors)")
        #expect(boxed.received == producers * m)
        let live = Tracked.live.load(ordering: .relaxed)
        let objects = try Self.run(producers: producers, perProducer: m, capacity: 8,
                                   make: { Tracked($0 << 32 | $1) },
                                   unpack: { ($0.value >> 32, $0.value & 0xffff_ffff) })
        #expect(objects.errors.isEmpty, "\(objects.errors)")
        #expect(objects.received == producers * m)
        #expect(Tracked.live.load(ordering: .relaxed) == live)
    }

    @Test("senders racing with close: every message is either refused back or drained, none lost",
          .timeLimit(.minutes(1)))
    func closeRace() throws {
        for round in 0..<20 {
            let mailbox = try Mailbox<Int>(capacity: 8)
            let refused = Atomic<Int>(0)
            let perProducer = 2_000
            let drainedBeforeClose = Atomic<Int>(0)
            let closer = Thread {
                var n = 0
                for _ in 0..<(round * 10) { _ = mailbox.drain(max: 8) { _ in n += 1 } }
                drainedBeforeClose.store(n, ordering: .relaxed)
                mailbox.close()
            }
            closer.start()
            runOnThreads(4) { _ in
                for i in 0..<perProducer {
                    if case .closed(let back) = mailbox.send(i) {
                        #expect(back == i)
                        refused.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            }
            while !mailbox.isClosed { usleep(100) }
            // the closer has finished touching the consumer side once isClosed is visible and
            // it has exited; give it a moment, then drain the rest as the consumer
            usleep(1000)
            let rest = mailbox.closeAndDrain().count
            #expect(drainedBeforeClose.load(ordering: .relaxed) + rest + refused.load(ordering: .relaxed) == 4 * perProducer)
        }
    }
}
