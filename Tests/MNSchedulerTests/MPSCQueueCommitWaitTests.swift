import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

/// A drain that finds nothing committed while a producer has claimed a ring slot waits for
/// that commit, a bounded time, before its turn ends (MPSCQueue.swift, "Producers between
/// claim and commit"); the idle protocol is otherwise unchanged.
@Suite struct MPSCQueueCommitWaitTests {
    /// Enqueues item 1, then claims the next slot as a producer that has not committed.
    private func claimSlot(after queue: borrowing MPSCQueue) throws -> (UnsafeMutableRawPointer, UInt32) {
        guard case .accepted(becameNonEmpty: true) = queue.enqueue(word: 1) else {
            Issue.record("the first enqueue must claim the consumer")
            throw CancellationError()
        }
        var ticket: UInt32 = 0
        let slot = try #require(queue.ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket))
        return (slot, ticket)
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a drain that meets a producer between claim and commit waits for the commit before its turn ends")
    func drainWaitsForClaimedSlot() throws {
        let queue = try MPSCQueueBox(capacity: 8)
        let (slot, ticket) = try claimSlot(after: queue.queue)
        // The producer commits at the consumer's first look for it (before the rule, the
        // turn ended without looking, and the helper commits after the drain).
        var first: [UInt] = []
        let (outcome, waited) = drainWithCommitDuringWait(queue.queue, slot: slot, ticket: ticket, value: 2) {
            queue.drain(max: 16) { first.append($0) }
        }
        #expect(first == [1])
        #expect(outcome == .more)          // the turn was kept: the item is certain to come
        #expect(queue.hasPendingWork)      // and no producer had to claim the consumer
        #expect(waited, "the drain ended its turn without waiting for the claimed slot's commit")
        var second: [UInt] = []
        #expect(queue.drain(max: 16) { second.append($0) } == .empty)
        #expect(second == [2])
    }
#endif

    @Test("a producer that never commits in time: the wait is bounded, the turn kept, nothing lost")
    func waitForAPreemptedProducerIsBounded() throws {
        let queue = try MPSCQueueBox(capacity: 8)
        let (slot, ticket) = try claimSlot(after: queue.queue)
        var taken: [UInt] = []
        // Off the pool, and then on a worker with nothing else to run (which also yields once).
        #expect(queue.drain(max: 16) { taken.append($0) } == .more)
        #expect(queue.hasPendingWork)
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let onWorker = Lock<MPSCQueue.DrainOutcome?>(nil)
        let unit = ClosureUnit { _, _ in
            let outcome = queue.drain(max: 16) { (_: UInt) in Issue.record("nothing is committed yet") }
            onWorker.withLock { $0 = outcome }
            return .idle
        }
        scheduler.schedule(unit)
        #expect(waitUntil { onWorker.withLock { $0 } != nil })
        #expect(onWorker.withLock { $0 } == .more)
        #expect(queue.hasPendingWork)
        slot.storeBytes(of: UInt(2), as: UInt.self)
        queue.ring.publishMultiProducer(slot: slot, ticket: ticket)
        #expect(queue.drain(max: 16) { taken.append($0) } == .empty)
        #expect(taken == [1, 2])
        #expect(!queue.hasPendingWork)
    }
}
