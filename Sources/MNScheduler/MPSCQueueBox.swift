// MPSCQueueBox: an MPSCQueue on its own, for an owner that shares a queue by reference
// (an actor cell's system queue, tests). Owners that are scheduled store the queue inline.

/// One ``MPSCQueue`` in its own object. Thread-safety: that of the queue.
@usableFromInline
package final class MPSCQueueBox: Sendable {
    /// The queue; it lives as long as the box.
    @usableFromInline package let queue: MPSCQueue

    /// A box around an empty queue (see `MPSCQueue.init(capacity:itemBytes:reclaimable:)`).
    package init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
        queue = try MPSCQueue(capacity: capacity, itemBytes: itemBytes, reclaimable: reclaimable)
    }

    /// A box around an empty queue of a validated shape.
    @inlinable package init(shape: MPSCQueue.Shape) { queue = MPSCQueue(shape: shape) }
}
