import Testing
import Foundation
import Synchronization
@testable import MNScheduler
import TestSupport

/// An idle queue gives its ring back (MPSCQueue.swift, "Giving the ring back"; the grace
/// period: RingEpoch.swift): seal, detach, retire; the next send allocates a fresh ring.
/// The epoch is one for the whole process and any
/// worker in a long turn holds it back, so these tests, which wait for every retired block
/// to be freed, run alone, in the stress target.
@Suite(.serialized) struct MPSCQueueReclaimTests {
    @Test("a ring given back: the next sends get a fresh one, in order, exactly once, and the taken count goes on")
    func releaseThenSendDeliversInOrder() throws {
        let queue = try MPSCQueueBox(capacity: 8, reclaimable: true)
        for i in UInt(1)...5 { _ = queue.enqueue(word: i) }
        var got: [UInt] = []
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(queue.releaseIdleRing())
        #expect(!queue.hasRing)
        #expect(queue.dequeuedCount == 5)
        #expect(queue.approximateCount == 0)
        #expect(!queue.releaseIdleRing())  // nothing to give back
        // Past the new ring's capacity: the rest overflows, in order.
        for i in UInt(6)...20 { _ = queue.enqueue(word: i) }
        #expect(queue.hasRing)
        #expect(queue.approximateCount == 15)
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == Array(1...20))
        #expect(queue.dequeuedCount == 20)
        // The overflow list (empty now) goes with the ring; its count is handed to the owner.
        #expect(queue.overflowAppends == 8)
        var dropped = 0
        #expect(queue.releaseIdleRing(overflowAppends: &dropped))
        #expect(dropped == 8)
        #expect(!queue.hasRing)
        #expect(queue.overflowAppends == 0)
        #expect(queue.dequeuedCount == 20)
        RingEpoch.collect(wait: true)
    }

    @Test("no ring is given back while it holds anything, or a producer has claimed a slot, or for a plain queue")
    func releaseRefusedUnlessIdle() throws {
        let plain = try MPSCQueueBox(capacity: 8)
        _ = plain.enqueue(word: 1)
        var got: [UInt] = []
        _ = plain.drainAll(into: &got)
        #expect(!plain.releaseIdleRing())
        #expect(plain.hasRing)

        let queue = try MPSCQueueBox(capacity: 8, reclaimable: true)
        _ = queue.enqueue(word: 1)
        #expect(!queue.releaseIdleRing())  // an item waits
        #expect(queue.hasRing)
        #expect(queue.drainAll(into: &got) == .empty)
        // A producer between claim and commit: the seal loses to its claim.
        var ticket: UInt32 = 0
        let slot = try #require(queue.ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket))
        #expect(!queue.releaseIdleRing())
        slot.storeBytes(of: UInt(2), as: UInt.self)
        queue.ring.publishMultiProducer(slot: slot, ticket: ticket)
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == [1, 1, 2])
        #expect(queue.releaseIdleRing())  // and once it is idle again
        RingEpoch.collect(wait: true)
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a producer that loaded the ring, paused before its claim while the ring was given back: its item is delivered")
    func producerPausedAcrossRelease() throws {
        let queue = try MPSCQueueBox(capacity: 8, reclaimable: true)
        _ = queue.enqueue(word: 1)
        var got: [UInt] = []
        #expect(queue.drainAll(into: &got) == .empty)
        let producer = PausedProducer(enqueuing: 2, into: queue)
        #expect(producer.paused)
        // The consumer's turn: nothing to take, so it gives the ring back, and the block
        // waits for the producer's section to end.
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(queue.releaseIdleRing())
        RingEpoch.collect(wait: true)
        #expect(RingEpoch.pendingBlocks >= 1)
        let outcome = producer.resume()
        #expect(outcome != nil)
        // Its claim met the seal ("full"), its overflow path found no ring and installed one.
        #expect(outcome == .accepted(becameNonEmpty: true))
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == [1, 2], "the paused producer's item was lost")
        #expect(queue.dequeuedCount == 2)
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }
#endif

    @Test("producers on plain threads and on workers, statistics readers, a consumer giving the ring back over and over: nothing lost, per-producer order kept")
    func stress() throws {
        let queue = try MPSCQueueBox(capacity: 16, reclaimable: true)
        let perProducer = 20_000
        let threads = 2
        let units = 2
        let total = (threads + units) * perProducer
        let done = Atomic<Bool>(false)
        let releases = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        final class Counter: @unchecked Sendable { var next = 0 }
        // Worker producers: each unit sends a batch per turn.
        for u in 0..<units {
            let counter = Counter()
            let id = UInt(threads + u)
            let unit = ClosureUnit { _, _ in
                for _ in 0..<64 where counter.next < perProducer {
                    _ = queue.enqueue(word: id << 32 | UInt(counter.next))
                    counter.next += 1
                }
                return counter.next < perProducer ? .more : .idle
            }
            scheduler.schedule(unit)
        }
        onThreads(threads + 2) { index in
            if index < threads {
                for i in 0..<perProducer {
                    _ = queue.enqueue(word: UInt(index) << 32 | UInt(i))
                    if i % 512 == 0 { sched_yield() }
                }
            } else if index == threads {
                // The consumer.
                var next = [Int](repeating: 0, count: threads + units)
                var received = 0
                while received < total {
                    let outcome = queue.drain(max: 256) { (word: UInt) in
                        let producer = Int(word >> 32), sequence = Int(word & 0xFFFF_FFFF)
                        if sequence != next[producer] { failures.wrappingAdd(1, ordering: .relaxed) }
                        next[producer] = sequence + 1
                        received += 1
                    }
                    if outcome == .empty {
                        if queue.releaseIdleRing() { releases.wrappingAdd(1, ordering: .relaxed) }
                        RingEpoch.collect()
                        sched_yield()
                    }
                }
                if queue.dequeuedCount != total { failures.wrappingAdd(1, ordering: .relaxed) }
                done.store(true, ordering: .releasing)
            } else {
                // A statistics reader on another thread.
                while !done.load(ordering: .acquiring) {
                    if queue.approximateCount < 0 || queue.dequeuedCount > total || queue.overflowAppends < 0 {
                        failures.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(queue.dequeuedCount == total)
        // Idle now for certain: it gives its ring back (unless it overflowed at some point).
        var rest: [UInt] = []
        #expect(queue.drainAll(into: &rest) == .empty)
        #expect(rest.isEmpty)
        #expect(!queue.hasRing || queue.releaseIdleRing())  // (the consumer's last drain may have given it back)
        #expect(!queue.hasRing)
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }
}
