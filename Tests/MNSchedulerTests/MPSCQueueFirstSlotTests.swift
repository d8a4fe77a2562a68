import Dispatch
import Testing
@testable import MNScheduler
import TestSupport

/// A reclaimable queue whose owner is its consumer keeps its first item in the queue itself
/// and makes a ring only for a second (MailboxQueue.md, "The first slot").
@Suite struct MPSCQueueFirstSlotTests {
    @Test("the first item waits in the first slot, a second makes the ring, and the slot is used once")
    func firstItemNeedsNoRing() throws {
        let owner = try QueueUnit.withFirstSlot()
        #expect(owner.hasFirstSlot)
        #expect(owner.enqueue(word: 1) == .accepted(becameNonEmpty: true))
        #expect(!owner.hasRing, "the first item made a ring")
        #expect(owner.count == 1)
        #expect(owner.enqueue(word: 2) == .accepted(becameNonEmpty: true))  // the unit is idle: the test never scheduled it
        #expect(owner.hasRing)
        #expect(owner.count == 2)
        // The slot's item ends its turn with `.more`: the ring's item is the next turn's.
        let first = owner.drainTurn()
        #expect(first.0 == .more)
        #expect(first.1 == [1])
        let (outcome, taken) = owner.drainAll()
        #expect(outcome == .empty)
        #expect(taken == [2])
        #expect(owner.taken == 2)
        #expect(owner.count == 0)
        // Spent: a later item goes to the ring even once the ring is given back.
        #expect(owner.releaseRing())
        #expect(owner.enqueue(word: 3) == .accepted(becameNonEmpty: true))
        #expect(owner.hasRing)
        #expect(owner.drainAll().1 == [3])
        #expect(owner.taken == 3)
    }

    @Test("a drain whose budget the first slot uses up leaves the ring for the next turn")
    func firstSlotCountsAgainstTheBudget() throws {
        let owner = try QueueUnit.withFirstSlot()
        _ = owner.enqueue(word: 1)
        _ = owner.enqueue(word: 2)
        let first = owner.drainTurn(max: 1)
        #expect(first.0 == .more)
        #expect(first.1 == [1])
        #expect(owner.drainTurn(max: 1).1 == [2])
    }

    @Test("items of up to sixteen bytes travel whole in the first slot", arguments: [9, 12, 16])
    func wideItems(itemBytes: Int) throws {
        let owner = try QueueUnit.withFirstSlot(itemBytes: itemBytes)
        #expect(owner.hasFirstSlot)
        var item: (UInt64, UInt64) = (0x0102_0304_0506_0708, 0x1112_1314_1516_1718)
        let result = withUnsafeMutableBytes(of: &item) {
            owner.queue.enqueue(moving: $0.baseAddress!, itemBytes: itemBytes, recording: UntypedItems.self, signalling: owner.entry)
        }
        #expect(result == .accepted(becameNonEmpty: true))
        #expect(!owner.hasRing)
        if itemBytes == 16 {  // the item lies in the slot's fields (MPSCQueue.firstItemOffset)
            let stored = owner.storedItem
            #expect(stored.0 == item.0 && stored.1 == item.1)
        }
        var out: [[UInt8]] = []
        _ = owner.queue.drain(max: 4, itemBytes: itemBytes, signallingUnit: true,
                              taking: { Array(UnsafeRawBufferPointer(start: $0, count: itemBytes)) }, { out.append($0) })
        let expected = withUnsafeBytes(of: &item) { Array($0.prefix(itemBytes)) }
        #expect(out == [expected])
    }

    @Test("only a reclaimable queue of items that fit, whose owner signals, has a first slot")
    func whichQueuesHaveOne() throws {
        func hasFirstSlot(_ shape: MPSCQueue.Shape) -> Bool { MPSCQueue(shape: shape).hasFirstSlot }
        #expect(!hasFirstSlot(try MPSCQueue.Shape(capacity: 8).signallingUnit()))  // its ring is eager
        #expect(!hasFirstSlot(try MPSCQueue.Shape(capacity: 8, reclaimable: true)))  // keeps its flag
        #expect(!hasFirstSlot(try MPSCQueue.Shape(capacity: 8, itemBytes: 17, reclaimable: true).signallingUnit()))
        #expect(hasFirstSlot(try MPSCQueue.Shape(capacity: 8, itemBytes: 16, reclaimable: true).signallingUnit()))
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a claimed first slot holds back what came after it until its producer publishes")
    func claimedSlotIsTheHead() throws {
        let owner = try QueueUnit.withFirstSlot()
        let arrived = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        MPSCQueueTestHook.armPublish(owner.queue) {
            arrived.signal()
            proceed.wait()
        }
        let parked = JoinableThread { _ = owner.enqueue(word: 1) }
        #expect(arrived.wait(timeout: .now() + 20) == .success, "the first send did not reach its publish")
        // A second producer finds the slot claimed and makes the ring.
        #expect(owner.enqueue(word: 2) == .accepted(becameNonEmpty: true))
        #expect(owner.hasRing)
        #expect(owner.count == 2)
        // The drain waits at the slot only, then ends its turn with nothing handed out.
        let early = owner.drainTurn()
        #expect(early.0 == .more)
        #expect(early.1.isEmpty, "an item behind the claimed slot was handed out first")
        proceed.signal()
        parked.join()
        let rest = owner.drainAll()
        #expect(rest.0 == .empty)
        #expect(rest.1 == [1, 2])
    }
#endif

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a drain that found the slot free looks again once it sees a ring: the slot's item comes first")
    func slotClaimedDuringTheDrainsLook() throws {
        let owner = try QueueUnit.withFirstSlot()
        // Between the drain's look at the free slot and its look at the ring word, one
        // producer sends twice: into the slot, then (the slot taken) into a new ring.
        MPSCQueueTestHook.armFirstSlotLook(owner.queue) {
            _ = owner.enqueue(word: 1)
            _ = owner.enqueue(word: 2)
        }
        let (outcome, taken) = owner.drainAll()
        #expect(outcome == .empty)
        #expect(taken == [1, 2], "the ring's item was handed out before the slot's")
    }
#endif

    @Test("the owner takes an item nobody drained out of the first slot, once")
    func ownerTakesALeftItem() throws {
        let owner = try QueueUnit.withFirstSlot()
        _ = owner.enqueue(word: 42)
        var left: [UInt] = []
        owner.queue.takeFirstSlotItem { left.append($0.load(as: UInt.self)) }
        owner.queue.takeFirstSlotItem { left.append($0.load(as: UInt.self)) }
        #expect(left == [42])
        #expect(owner.drainTurn().1.isEmpty)
    }
}

extension QueueUnit {
    /// A unit whose queue has a first slot: reclaimable, of `itemBytes`-byte items.
    static func withFirstSlot(itemBytes: Int = 8) throws -> QueueUnit {
        QueueUnit(shape: try MPSCQueue.Shape(capacity: 8, itemBytes: itemBytes, reclaimable: true).signallingUnit())
    }

    /// One drain of word items: a turn's look at the queue.
    func drainTurn(max: Int = 16) -> (MPSCQueue.DrainOutcome, [UInt]) {
        var taken: [UInt] = []
        let outcome = queue.drain(max: max, itemBytes: 8, signallingUnit: true,
                                  taking: { $0.load(as: UInt.self) }, { taken.append($0) })
        return (outcome, taken)
    }

    /// Drains turn after turn (at most `turns`) until one ends `.empty`.
    func drainAll(turns: Int = 8) -> (MPSCQueue.DrainOutcome, [UInt]) {
        var all: [UInt] = []
        var outcome = MPSCQueue.DrainOutcome.more
        for _ in 0..<turns where outcome == .more {
            let (next, taken) = drainTurn()
            outcome = next
            all += taken
        }
        return (outcome, all)
    }

    var hasFirstSlot: Bool { queue.hasFirstSlot }
    var hasRing: Bool { queue.hasRing }
    var count: Int { queue.approximateCount }
    var taken: Int { queue.dequeuedCount }
    func releaseRing() -> Bool { queue.releaseIdleRing() }
    /// The slot's two words, read through the queue's fields.
    var storedItem: (UInt64, UInt64) {
        (queue.firstItemLow.load(ordering: .relaxed), queue.firstItemHigh.load(ordering: .relaxed))
    }
}
