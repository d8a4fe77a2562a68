import Testing
import Synchronization
@testable import MNScheduler

/// A scheduled unit that stores a queue whose consumer it is, its state word standing in for
/// the idle flag (MPSCQueue.swift, "The unit as the idle flag"; Models/unit_mailbox.pml).
/// The unit's transitions are driven by hand here, as a worker would make them.
@Suite struct MPSCQueueUnitSignalTests {
    /// Never scheduled: the test plays the worker.
    final class QueueUnit: ScheduledUnit, @unchecked Sendable {
        let unitHeader = UnitHeader(kind: QueueUnit.unitKind)
        static let unitKind = UnitKind.register(QueueUnit.self)
        let queue: MPSCQueue
        init(shape: MPSCQueue.Shape) {
            queue = MPSCQueue(shape: shape)
        }

        /// A producer's send, signalling this unit.
        func enqueue(word: UInt) -> MPSCQueue.EnqueueResult {
            withUnsafeBytes(of: word) { queue.enqueue(moving: $0.baseAddress!, recording: UntypedItems.self, signalling: entry) }
        }

        func drain(max: Int, _ body: (UInt) -> Void) -> MPSCQueue.DrainOutcome { queue.drain(max: max, body) }

        /// A turn is running or due.
        var hasPendingWork: Bool { stateSnapshot != UnitHeader.idle }

        // The worker's transitions, driven by the test.
        func transitionToScheduled(expectingOwner: Bool) -> UnitHeader.ScheduleClaim {
            unitHeader.transitionToScheduled(expectingOwner: expectingOwner)
        }
        func transitionToRunning() -> UInt8 { unitHeader.transitionToRunning() }
        func transitionAfterTurn(_ outcome: TurnOutcome, owner: UInt8) -> UnitHeader.AfterTurn {
            unitHeader.transitionAfterTurn(outcome, owner: owner)
        }

        func runTurn(budget: Int) -> TurnOutcome { preconditionFailure("never scheduled: the test plays the worker") }
        func runAfterShutdown() {}
    }

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
}
