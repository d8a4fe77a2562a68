@testable import MNScheduler

/// The queue operations tests use, on the box, so a test holds a copyable reference (for
/// `#expect` and threads) and reads as if it held the queue.
extension MPSCQueueBox {
    package func enqueue(word: UInt) -> MPSCQueue.EnqueueResult { queue.enqueue(word: word) }
    package func enqueue(moving source: UnsafeRawPointer) -> MPSCQueue.EnqueueResult { queue.enqueue(moving: source) }
    package func enqueue(_ pointer: UnsafeMutableRawPointer) -> MPSCQueue.EnqueueResult { queue.enqueue(pointer) }
    package func tryEnqueue(moving source: UnsafeRawPointer) -> MPSCQueue.EnqueueResult? { queue.tryEnqueue(moving: source) }
    package func drain(max: Int, _ body: (UInt) -> Void) -> MPSCQueue.DrainOutcome { queue.drain(max: max, body) }
    package func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> MPSCQueue.DrainOutcome {
        queue.drain(max: max, body)
    }
    /// `lingering`: with the permit of the worker running this turn, as a cell's drain gets it.
    package func drain<Item>(max: Int, lingering: Bool = false, taking take: (UnsafeMutableRawPointer) -> Item,
                             _ body: (Item) -> Void) -> MPSCQueue.DrainOutcome {
        queue.drain(max: max, lingering: lingering ? Worker.currentLingerPermit : .never, taking: take, body)
    }
    @discardableResult package func releaseIdleRing() -> Bool { queue.releaseIdleRing() }
    package func releaseIdleRing(overflowAppends dropped: inout Int) -> Bool { queue.releaseIdleRing(overflowAppends: &dropped) }
    package func reserveRing() throws(RingAllocationError) { try queue.reserveRing() }
    @discardableResult package func markClosed() -> Bool { queue.markClosed() }
    package var ring: RawRing { queue.ring }
    package var ringBlock: UnsafeMutableRawPointer? { queue.ringBlock }
    package var hasRing: Bool { queue.hasRing }
    package var ringBytes: Int { queue.ringBytes }
    package var capacity: Int { queue.capacity }
    package var isClosed: Bool { queue.isClosed }
    package var hasPendingWork: Bool { queue.hasPendingWork }
    package var dequeuedCount: Int { queue.dequeuedCount }
    package var approximateCount: Int { queue.approximateCount }
    package var overflowAppends: Int { queue.overflowAppends }
    package var overflowChunksHeld: Int { queue.overflowChunksHeld }
}
