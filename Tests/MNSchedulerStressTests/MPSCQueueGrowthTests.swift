import Testing
import Foundation
import Synchronization
@testable import MNScheduler
import TestSupport

/// A reclaimable queue starts with a small ring and swaps it for a full-size one when a
/// burst overflows it (MailboxQueue.md, "Growing the ring"). The swapped-out ring is
/// retired through the ring epoch, so, like the reclaim tests, these run alone.
@Suite(.serialized) struct MPSCQueueGrowthTests {
    private func ringBytes(_ capacity: Int) -> Int { RawRing.mailboxAllocationSize(capacity: capacity, slotBytes: 8) }

    @Test("the first ring is small; a burst past it swaps in a full ring, with every item in order and the counts kept")
    func burstGrowsTheRing() throws {
        let queue = try MPSCQueueBox(capacity: 32, reclaimable: true)
        _ = queue.enqueue(word: 0)
        #expect(queue.ringBytes == ringBytes(MPSCQueue.firstRingCapacity))
        var got: [UInt] = []
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(queue.ringBytes == ringBytes(MPSCQueue.firstRingCapacity), "one message is no burst")
        for i in UInt(1)...40 { _ = queue.enqueue(word: i) }
        let overflowed = queue.overflowAppends
        #expect(overflowed > 0)
        #expect(queue.approximateCount == 40)
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == Array(0...40))
        #expect(queue.ringBytes == ringBytes(32), "the burst grew the ring")
        #expect(queue.dequeuedCount == 41, "the taken count moved to the new ring")
        #expect(queue.overflowAppends == overflowed, "the overflow list moved to the new ring")
        // Given back and reinstalled: full-size from now on.
        #expect(queue.releaseIdleRing())
        _ = queue.enqueue(word: 41)
        #expect(queue.ringBytes == ringBytes(32))
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == Array(0...41))
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a take whose growth seal lost: the ring grows between pending runs, every item in order")
    func growthRetriedAfterLostSeal() throws {
        let queue = try MPSCQueueBox(capacity: 32, reclaimable: true)
        // The small ring, then two overflow chunks (the first holds 32 items).
        for i in UInt(1)...60 { _ = queue.enqueue(word: i) }
        MPSCQueueTestHook.loseGrowthSeal.store(true, ordering: .relaxed)
        var got: [UInt] = []
        #expect(queue.drainAll(into: &got) == .empty)
        let armed = MPSCQueueTestHook.loseGrowthSeal.load(ordering: .relaxed)
        #expect(!armed, "the take tried to grow")
        #expect(got == Array(1...60))
        #expect(queue.ringBytes == ringBytes(32), "the retry after the first pending run grew the ring")
        #expect(queue.dequeuedCount == 60)
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }
#endif

    @Test("a queue that is not reclaimable, or whose capacity is already small, never swaps")
    func noSwapWithoutReclaim() throws {
        let plain = try MPSCQueueBox(capacity: 32)
        _ = plain.enqueue(word: 1)
        #expect(plain.ringBytes == ringBytes(32))
        let small = try MPSCQueueBox(capacity: 4, reclaimable: true)
        for i in UInt(1)...20 { _ = small.enqueue(word: i) }
        var got: [UInt] = []
        #expect(small.drainAll(into: &got) == .empty)
        #expect(got == Array(1...20))
        #expect(small.ringBytes == ringBytes(4))
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a producer paused with the small ring in hand while the consumer swaps it: its item arrives after the burst")
    func producerPausedAcrossGrowth() throws {
        let queue = try MPSCQueueBox(capacity: 32, reclaimable: true)
        for i in UInt(1)...10 { _ = queue.enqueue(word: i) }  // the small ring, then overflow
        let producer = PausedProducer(enqueuing: 11, into: queue)
        #expect(producer.paused)
        var got: [UInt] = []
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == Array(1...10))
        #expect(queue.ringBytes == ringBytes(32), "the consumer swapped the ring while the producer held the old one")
        RingEpoch.collect(wait: true)
        #expect(RingEpoch.pendingBlocks >= 1, "the old block waits for the producer's section")
        let outcome = producer.resume()
        #expect(outcome != nil)
        // Its claim met the seal ("full"); the overflow path found the new ring.
        #expect(outcome == .accepted(becameNonEmpty: true))
        #expect(queue.drainAll(into: &got) == .empty)
        #expect(got == Array(1...11), "the paused producer's item was lost or reordered")
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }
#endif
}
