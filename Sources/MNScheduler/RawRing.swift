// RawRing: Concurrency Kit's ck_ring in one malloc block, for pointers and words (ck's own
// operations) and for mailbox entries (ckshim.h, "Ready marks").
//
// Layout: [ struct ck_ring + one cache line of padding, rounded up to 16 ]
//         [ capacity × slot bytes ]                        (ck's rings: pointers, words)
//         [ capacity × (8-byte ready mark + slot bytes) ]  (mailbox rings)
// The padding keeps slot 0 off ck's size/mask line, so malloc's alignment suffices. An
// MPSCQueue keeps a few words in it (ckshim.h, "What MPSCQueue keeps in its ring block").
//
// Invariants:
//   (B1) Capacity is a power of two in 4...maximumCapacity; the ring holds capacity − 1.
//   (B2) No slot is read before it is written: a mailbox reads slot c only once its mark
//        says ticket c was published; ck's dequeues read only below p_tail.
//   (B3) "sp"/"sc" operations have one thread on that side at a time; the caller sees to it.
// Ordering: ck's fences around p_tail, plus a release fence before c_head is published
// (ckshim.h, "Consumer ordering").

import CConcurrencyKit

/// Why a ring capacity was refused.
@usableFromInline package struct RingCapacityError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The capacity that was asked for.
    package let requested: Int
    @usableFromInline init(requested: Int) { self.requested = requested }
    @usableFromInline package var description: String {
        "ring capacity \(requested) is invalid: it must be a power of two between 4 and \(RawRing.maximumCapacity) (ck_ring holds capacity − 1 entries)"
    }
}

/// Why a ring could not be allocated: malloc failed (out of memory or over a memory limit).
package struct RingAllocationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Slots of the ring that was asked for.
    package let capacity: Int
    /// Bytes the allocation asked for.
    package let bytes: Int
    package var description: String {
        "could not allocate a ring of \(capacity) slots (\(bytes) bytes): out of memory or over a memory limit"
    }
}

/// A bounded FIFO of non-nil raw pointers on `ck_ring`.
///
/// A handle: copying it copies two pointers, not the ring. `deallocate()` exactly once,
/// when no thread uses it. Lock-free; ck's `enqueueMultiProducer` may spin behind an
/// earlier producer's commit, the mailbox publish never does.
@usableFromInline
package struct RawRing: @unchecked Sendable {
    /// Largest capacity accepted: beyond it a queue overflows or spills in order.
    @inlinable package static var maximumCapacity: Int { 1 << 20 }  // computed: a constant in inlined code

    @usableFromInline let ring: UnsafeMutablePointer<ck_ring_t>
    @usableFromInline let buffer: UnsafeMutablePointer<ck_ring_buffer_t>

    /// Bytes of the header region.
    @inlinable package static var headerBytes: Int {
        Int(ckshim_ring_block_header_size())
    }

    /// Largest item that travels inside the ring.
    @inlinable package static var maximumSlotBytes: Int { 64 }  // computed: a constant in inlined code

    /// Bytes one ring of `capacity` slots allocates.
    package static func allocationSize(capacity: Int, slotBytes: Int = 8) -> Int {
        headerBytes + capacity * slotBytes
    }

    /// Bytes of a mailbox entry's ready mark.
    @inlinable package static var markBytes: Int { Int(CKSHIM_RING_MARK_BYTES) }

    /// Bytes of one mailbox entry: its mark, then the slot.
    @inlinable package static func entryStride(slotBytes: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: markBytes + slotBytes)
    }

    /// Bytes one mailbox ring of `capacity` entries allocates.
    package static func mailboxAllocationSize(capacity: Int, slotBytes: Int) -> Int {
        allocationSize(capacity: capacity, slotBytes: markBytes + slotBytes)
    }

    /// Checks a capacity (B1). Inlinable, so a constant is checked at compile time.
    @inlinable package static func validate(capacity: Int) throws(RingCapacityError) {
        guard capacity >= 4, capacity <= maximumCapacity, capacity & (capacity - 1) == 0 else {
            throw RingCapacityError(requested: capacity)
        }
    }

    /// Allocates a ring of a valid capacity; traps without memory. Where a failure must be
    /// reported, use `init(tryCapacity:)`.
    package init(capacity: Int) {
        do {
            try self.init(tryCapacity: capacity)
        } catch {
            fatalError("RawRing: \(error)")
        }
    }

    /// Allocates a ring of a valid capacity, throwing when out of memory. `allocate` is
    /// malloc unless a test substitutes a failing one.
    package init(tryCapacity capacity: Int, slotBytes: Int = 8,
                 allocate: (_ bytes: Int) -> UnsafeMutableRawPointer? = RawRing.allocateBlock)
    throws(RingAllocationError) {
        precondition(RawRing.isValid(capacity: capacity), RingCapacityError(requested: capacity).description)
        precondition(RawRing.isValid(slotBytes: slotBytes), RawRing.invalidSlotMessage(slotBytes))
        try self.init(checkedCapacity: capacity, slotBytes: slotBytes, allocate: allocate)
    }

    /// A mailbox ring for a validated shape. The entries start zeroed: every mark says
    /// "never published" (B2).
    @inline(__always)
    init(tryMailboxCapacity capacity: Int, slotBytes: Int) throws(RingAllocationError) {
        assert(RawRing.isValid(capacity: capacity), RingCapacityError(requested: capacity).description)
        assert(RawRing.isValid(slotBytes: slotBytes), RawRing.invalidSlotMessage(slotBytes))
        let stride = RawRing.markBytes + slotBytes
        try self.init(checkedCapacity: capacity, slotBytes: stride, allocate: RawRing.allocateBlock)
        UnsafeMutableRawPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0, count: capacity * stride)
    }

    /// A mailbox ring from calloc: for a large ring, whose pages the system hands out zeroed
    /// as they are first touched, so an unused part costs no memory.
    init(callocMailboxCapacity capacity: Int, slotBytes: Int) throws(RingAllocationError) {
        precondition(RawRing.isValid(capacity: capacity), RingCapacityError(requested: capacity).description)
        precondition(RawRing.isValid(slotBytes: slotBytes), RawRing.invalidSlotMessage(slotBytes))
        try self.init(checkedCapacity: capacity, slotBytes: RawRing.markBytes + slotBytes) { calloc(1, $0) }
    }

    /// The inits' allocation.
    @inline(__always)
    private init(checkedCapacity capacity: Int, slotBytes: Int, allocate: (_ bytes: Int) -> UnsafeMutableRawPointer?)
    throws(RingAllocationError) {
        let size = RawRing.allocationSize(capacity: capacity, slotBytes: slotBytes)
        guard let block = allocate(size) else {
            throw RingAllocationError(capacity: capacity, bytes: size)
        }
        ring = block.bindMemory(to: ck_ring_t.self, capacity: 1)
        // The slots stay as malloc left them (B2).
        buffer = (block + RawRing.headerBytes).bindMemory(to: ck_ring_buffer_t.self, capacity: capacity)
        ckshim_ring_init(ring, UInt32(capacity))
    }

    private static func isValid(capacity: Int) -> Bool { (try? validate(capacity: capacity)) != nil }
    private static func isValid(slotBytes: Int) -> Bool { slotBytes >= 8 && slotBytes <= maximumSlotBytes && slotBytes % 8 == 0 }
    private static func invalidSlotMessage(_ slotBytes: Int) -> String {
        "RawRing: slot of \(slotBytes) bytes (must be a multiple of 8 up to \(maximumSlotBytes))"
    }

    /// malloc(bytes), nil when it fails.
    package static func allocateBlock(bytes: Int) -> UnsafeMutableRawPointer? { malloc(bytes) }

    /// Rebuilds the handle from `block`.
    @inlinable package init(block: UnsafeMutableRawPointer) {
        ring = block.assumingMemoryBound(to: ck_ring_t.self)
        buffer = (block + RawRing.headerBytes).assumingMemoryBound(to: ck_ring_buffer_t.self)
    }

    /// The start of the allocation (the ck_ring header).
    @inlinable package var block: UnsafeMutableRawPointer { UnsafeMutableRawPointer(ring) }

    /// True when nothing is claimed and unpublished, or left to dequeue. Consumer only.
    @inlinable package var isQuiescent: Bool { ckshim_ring_is_quiescent(ring) }

    /// Frees the ring; entries still inside are not touched.
    package func deallocate() {
        free(UnsafeMutableRawPointer(ring))
    }

    /// Slots in the ring (it holds at most `capacity - 1`).
    @inlinable package var capacity: Int { Int(ckshim_ring_capacity(ring)) }

    /// Entries currently published (a snapshot).
    @inlinable package var count: Int { Int(ckshim_ring_size(ring)) }

    /// `count == 0` (a snapshot).
    @inlinable package var isEmpty: Bool { ckshim_ring_is_empty(ring) }

    // MARK: word-sized entries

    /// Multi-producer enqueue of a raw word. False when full.
    @inlinable @inline(__always)
    package func enqueueMultiProducer(word: UInt) -> Bool {
        ckshim_ring_enqueue_mpmc(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Multi-producer enqueue whose commit wait yields after a short spin, so a preempted
    /// producer does not stall the ones behind it. False when full.
    @inlinable @inline(__always)
    package func enqueueMultiProducerYielding(word: UInt) -> Bool {
        ckshim_ring_enqueue_mp_yielding(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Single-producer enqueue of a raw word. False when full.
    @inlinable @inline(__always)
    package func enqueueSingleProducer(word: UInt) -> Bool {
        ckshim_ring_enqueue_spsc(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Single-consumer dequeue of a raw word. False when empty.
    @inlinable @inline(__always)
    package func dequeueSingleConsumer(word: inout UInt) -> Bool {
        withUnsafeMutablePointer(to: &word) { ckshim_ring_dequeue_spsc(ring, buffer, $0) }
    }

    // MARK: mailbox entries (ckshim.h, "Ready marks")

    /// Claims the next entry (multi-producer): its slot, nil when full. Write the item, then
    /// `publishMultiProducer(slot:ticket:)` at once: the consumer waits at this entry.
    @inlinable @inline(__always)
    package func reserveMultiProducer(slotBytes: Int, ticket: inout UInt32) -> UnsafeMutableRawPointer? {
        // Unprotected: `&ticket` would otherwise give every send a stack canary.
        _withUnprotectedUnsafeMutablePointer(to: &ticket) {
            ckshim_ring_reserve_mp_sized(ring, UnsafeMutableRawPointer(buffer) + RawRing.markBytes,
                                         RawRing.entryStride(slotBytes: slotBytes), $0)
        }
    }

    /// Publishes `slot`: one release store of its ready mark. Never waits.
    @inlinable @inline(__always)
    package func publishMultiProducer(slot: UnsafeMutableRawPointer, ticket: UInt32) {
        ckshim_ring_publish_mp(ring, slot, ticket)
    }

    /// The consumer index, c_head; only the consumer writes it.
    @inlinable @inline(__always)
    package var consumerHeadSingleConsumer: UInt32 { ckshim_ring_head_sc(ring) }

    /// The slot of entry `head` once published, else nil (single consumer). Move the item out,
    /// then `releaseSingleConsumer(to: head &+ 1)`.
    @inlinable @inline(__always)
    package func peekSingleConsumer(at head: UInt32, slotBytes: Int) -> UnsafeMutableRawPointer? {
        ckshim_ring_peek_sc_at(ring, UnsafeMutableRawPointer(buffer), RawRing.entryStride(slotBytes: slotBytes), head)
    }

    /// `peekSingleConsumer` for later looks: when nothing is claimed, answers from p_head.
    @inlinable @inline(__always)
    package func peekNextSingleConsumer(at head: UInt32, slotBytes: Int) -> UnsafeMutableRawPointer? {
        ckshim_ring_peek_sc_next(ring, UnsafeMutableRawPointer(buffer), RawRing.entryStride(slotBytes: slotBytes), head)
    }

    /// True when the entry at the consumer index is published (single consumer; acquire).
    @inlinable @inline(__always)
    package func headIsReadySingleConsumer(slotBytes: Int) -> Bool {
        peekSingleConsumer(at: consumerHeadSingleConsumer, slotBytes: slotBytes) != nil
    }

    /// Whether the entry at the consumer index is published, from any thread: a snapshot,
    /// true also while a consumer takes that entry.
    @inlinable @inline(__always)
    package func headIsReadyAnyThread(slotBytes: Int) -> Bool {
        ckshim_ring_head_ready_any(ring, UnsafeMutableRawPointer(buffer), RawRing.entryStride(slotBytes: slotBytes))
    }

    /// Mailbox entries claimed and not yet consumed (a snapshot; 0 while sealed).
    @inlinable package var claimedCount: Int { Int(ckshim_ring_claimed_count(ring)) }

    /// The owning MPSCQueue's count of items taken (consumer writes, anyone reads).
    @inlinable package var takenCount: Int {
        get { Int(truncatingIfNeeded: ckshim_ring_taken_load(ring)) }
        nonmutating set { ckshim_ring_taken_store(ring, UInt64(truncatingIfNeeded: newValue)) }
    }

    /// The owning MPSCQueue's overflow list, nil until its first overflow append.
    @inlinable var overflowListBase: UnsafeMutableRawPointer? {
        get { ckshim_ring_overflow_load(ring) }
        nonmutating set { ckshim_ring_overflow_store(ring, newValue) }
    }

    /// Seals an empty, quiescent ring so every later claim sees it full ("Giving the ring
    /// back"). False when a producer claimed first. Single consumer.
    @inlinable package func seal() -> Bool { ckshim_ring_seal(ring) }

    /// Undoes `seal()`: p_head back to c_head. Single consumer.
    @inlinable package func unseal() { ckshim_ring_unseal(ring) }

    /// Frees the peeked slot for reuse: the consumer index becomes `next`.
    @inlinable @inline(__always)
    package func releaseSingleConsumer(to next: UInt32) {
        ckshim_ring_release_sc_to(ring, next)
    }

    // MARK: single producer

    /// Enqueue from the one producer thread. Wait-free; false when full.
    @inlinable @inline(__always)
    package func enqueueSingleProducer(_ pointer: UnsafeMutableRawPointer) -> Bool {
        ckshim_ring_enqueue_spsc(ring, buffer, pointer)
    }

    // MARK: multi producer

    /// Enqueue from any thread: lock-free claim, in-order commit. False when full.
    @inlinable @inline(__always)
    package func enqueueMultiProducer(_ pointer: UnsafeMutableRawPointer) -> Bool {
        ckshim_ring_enqueue_mpmc(ring, buffer, pointer)
    }

    // MARK: consumers

    /// Dequeue from the one consumer thread. Wait-free; nil when empty.
    @inlinable @inline(__always)
    package func dequeueSingleConsumer() -> UnsafeMutableRawPointer? {
        var out: UnsafeMutableRawPointer? = nil
        return ckshim_ring_dequeue_spsc(ring, buffer, &out) ? out : nil
    }

    /// Dequeue racing other consumers (stealing); retries until it takes or sees empty.
    @inlinable @inline(__always)
    package func dequeueMultiConsumer() -> UnsafeMutableRawPointer? {
        var out: UnsafeMutableRawPointer? = nil
        return ckshim_ring_dequeue_mpmc(ring, buffer, &out) ? out : nil
    }

    /// One multi-consumer dequeue attempt: nil when empty or another consumer won (thieves).
    @inlinable @inline(__always)
    package func tryDequeueMultiConsumer() -> UnsafeMutableRawPointer? {
        var out: UnsafeMutableRawPointer? = nil
        return ckshim_ring_trydequeue_mpmc(ring, buffer, &out) ? out : nil
    }
}
