import Testing
import Synchronization
@testable import MNScheduler

/// A scheduled unit that stores a queue whose consumer it is, its state word standing in for
/// the idle flag (MPSCQueue.swift, "The unit as the idle flag"; Models/unit_mailbox.pml).
/// The unit's transitions are driven by hand here, as a worker would make them.
@Suite struct MPSCQueueUnitSignalTests {
    private func unitQueue() throws -> QueueUnit { QueueUnit(shape: try MPSCQueue.Shape(capacity: 8).signallingUnit()) }

    @Test("a send to a due unit (scheduled, notified) leaves it alone; to an idle or running one it reports becameNonEmpty")
    func sendsLookAtTheStateWord() throws {
        let queue = try unitQueue()
        #expect(queue.enqueue(word: 1) == .accepted(becameNonEmpty: true))    // idle: schedule it
        #expect(queue.transitionToScheduled(expectingOwner: false) == .pushRetained)  // T1
        #expect(queue.enqueue(word: 2) == .accepted(becameNonEmpty: false))   // scheduled: due
        let owner = queue.transitionToRunning()                               // T3
        #expect(queue.enqueue(word: 3) == .accepted(becameNonEmpty: true))    // running: T2 owed
        #expect(queue.transitionToScheduled(expectingOwner: false) == .none)  // T2: notified
        #expect(queue.enqueue(word: 4) == .accepted(becameNonEmpty: false))   // notified: due
        var taken: [UInt] = []
        #expect(queue.drain(max: 16) { taken.append($0) } == .empty)
        #expect(taken == [1, 2, 3, 4])
        // T4 fails on notified: the turn is queued again (T5), and the next one finds nothing.
        #expect(queue.transitionAfterTurn(.idle, owner: owner) == .requeue)
        #expect(queue.hasPendingWork)
        let again = queue.transitionToRunning()
        #expect(queue.drain(max: 16) { taken.append($0) } == .empty)
        #expect(queue.transitionAfterTurn(.idle, owner: again) == .idleRelease)
        #expect(!queue.hasPendingWork)
        #expect(taken == [1, 2, 3, 4])
        // The flag is never used by such a queue.
        let flagUntouched = queue.queue.idleOrFirstSlot.load(ordering: .relaxed) == MPSCQueue.FirstSlot.idle
        #expect(flagUntouched)
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a drain that meets a claimed, uncommitted slot keeps the turn: its producer may have found the unit due")
    func claimedSlotKeepsTheTurn() throws {
        let queue = try unitQueue()
        #expect(queue.enqueue(word: 1) == .accepted(becameNonEmpty: true))
        #expect(queue.transitionToScheduled(expectingOwner: false) == .pushRetained)
        // A producer claims the next slot while the unit is due, so it will not schedule it.
        var ticket: UInt32 = 0
        let slot = try #require(queue.queue.ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket))
        let owner = queue.transitionToRunning()
        var taken: [UInt] = []
        let (outcome, waited) = drainWithCommitDuringWait(queue.queue, slot: slot, ticket: ticket, value: 2) {
            queue.drain(max: 16) { taken.append($0) }
        }
        #expect(outcome == .more, "the turn ended (.empty) with an item certain to come whose producer found the unit due")
        #expect(waited, "the drain did not wait for the commit")
        #expect(queue.transitionAfterTurn(.more, owner: owner) == .requeue)
        let again = queue.transitionToRunning()
        #expect(queue.drain(max: 16) { taken.append($0) } == .empty)
        #expect(queue.transitionAfterTurn(.idle, owner: again) == .idleRelease)
        #expect(taken == [1, 2])
    }
#endif
}
