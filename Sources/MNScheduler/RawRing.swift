// RawRing: Concurrency Kit's ck_ring in one malloc block, for pointers and words (ck's own
// operations) and for mailbox entries (ckshim.h, "Ready marks").
//
// Layout: [ struct ck_ring + one cache line of padding, rounded up to 16 ]
//         [ capacity × slot bytes ]                        (ck's rings: pointers, words)
//         [ capacity × (8-byte ready mark + slot bytes) ]  (mailbox rings)
// ck keeps c_head, p_head/p_tail and size/mask a cache line apart, and the padding keeps
// slot 0 off size/mask's line, so the block needs only malloc's 16-byte alignment. An
// MPSCQueue keeps a few words in the padding (ckshim.h, "What MPSCQueue keeps in its ring
// block").
//
// Invariants:
//   (B1) Capacity is a power of two in 4...maximumCapacity; the ring holds capacity − 1.
//   (B2) No slot is read before it is written: a mailbox reads slot c only once its mark
//        says ticket c was published (the marks start zeroed); ck's dequeues and a thief's
//        speculative read read only below p_tail, published after the slot's store.
//   (B3) "sp"/"sc" operations have one thread on that side at a time. The caller sees to
//        it: a mailbox's consumer is one turn, a run queue's producer its owning worker.
// ck's multi-producer enqueue commits in ticket order, so a preempted producer stalls the
// ones behind it; the mailbox protocol publishes each slot on its own and never waits.
//
// Ordering: ck's (a store fence before the p_tail publish, a load fence after reading
// p_tail), plus a release fence in ckshim's dequeues before c_head is published, so a slot
// is read before a producer may reuse it (ckshim.h, "Consumer ordering"). Under CKSHIM_TSAN
// the wrappers add the happens-before edges ThreadSanitizer cannot see in ck's assembly.

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

/// Why a ring could not be allocated: malloc failed (out of memory, or over a
/// memory limit such as RLIMIT_DATA or a cgroup's memory.max).
package struct RingAllocationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Slots of the ring that was asked for.
    package let capacity: Int
    /// Bytes the allocation asked for (header plus slots).
    package let bytes: Int
    package var description: String {
        "could not allocate a ring of \(capacity) slots (\(bytes) bytes): out of memory or over a memory limit"
    }
}

/// A bounded FIFO of non-nil raw pointers on `ck_ring`.
///
/// A value type holding two pointers into one allocation: copying it copies the handle,
/// not the ring. `deallocate()` must be called exactly once, when no thread uses it.
/// Every operation is lock-free; ck's `enqueueMultiProducer` may spin while an earlier
/// producer finishes its commit, the mailbox protocol's publish never does.
@usableFromInline
package struct RawRing: @unchecked Sendable {
    /// Largest capacity accepted. A ring is only a queue's lock-free fast path (beyond it
    /// a queue overflows or spills in order), so a bigger one buys nothing but memory.
    @inlinable package static var maximumCapacity: Int { 1 << 20 }  // computed: a constant in inlined code

    @usableFromInline let ring: UnsafeMutablePointer<ck_ring_t>
    @usableFromInline let buffer: UnsafeMutablePointer<ck_ring_buffer_t>

    /// Bytes of the header region: sizeof(ck_ring) plus a cache line, rounded up to 16.
    @inlinable package static var headerBytes: Int {
        (Int(ckshim_ring_header_size()) + Int(ckshim_cacheline()) + 15) & ~15
    }

    /// Largest sized slot: a message up to this many bytes travels inside the ring.
    @inlinable package static var maximumSlotBytes: Int { 64 }  // computed: a constant in inlined code

    /// Bytes one ring of `capacity` slots of `slotBytes` each allocates.
    package static func allocationSize(capacity: Int, slotBytes: Int = 8) -> Int {
        headerBytes + capacity * slotBytes
    }

    /// Bytes of a mailbox ring's ready mark, before each slot (ckshim.h, "Ready marks").
    @inlinable package static var markBytes: Int { Int(CKSHIM_RING_MARK_BYTES) }

    /// Bytes of one mailbox entry with a slot of `slotBytes`: its mark, then the slot.
    @inlinable package static func entryStride(slotBytes: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: markBytes + slotBytes)
    }

    /// Bytes one mailbox ring of `capacity` entries allocates: the header, and a ready
    /// mark and a slot of `slotBytes` per entry.
    package static func mailboxAllocationSize(capacity: Int, slotBytes: Int) -> Int {
        allocationSize(capacity: capacity, slotBytes: markBytes + slotBytes)
    }

    /// Checks a capacity: a power of two in 4...maximumCapacity (B1). Inlinable, so a
    /// constant capacity is checked at compile time.
    @inlinable package static func validate(capacity: Int) throws(RingCapacityError) {
        guard capacity >= 4, capacity <= maximumCapacity, capacity & (capacity - 1) == 0 else {
            throw RingCapacityError(requested: capacity)
        }
    }

    /// Allocates and initialises a ring; traps if the memory cannot be had. For rings sized
    /// by the scheduler's validated configuration. `capacity` must already be valid. Where
    /// a failure must be reported, use `init(tryCapacity:)`.
    package init(capacity: Int) {
        do {
            try self.init(tryCapacity: capacity)
        } catch {
            fatalError("RawRing: \(error)")
        }
    }

    /// Allocates and initialises a ring, throwing instead of trapping when the memory
    /// cannot be had. `capacity` must already be valid (a programming error otherwise).
    /// `allocate(bytes)` is malloc unless a test substitutes a failing one; the block is
    /// released with free().
    package init(tryCapacity capacity: Int, slotBytes: Int = 8,
                 allocate: (_ bytes: Int) -> UnsafeMutableRawPointer? = RawRing.allocateBlock)
    throws(RingAllocationError) {
        precondition(RawRing.isValid(capacity: capacity), RingCapacityError(requested: capacity).description)
        precondition(RawRing.isValid(slotBytes: slotBytes), RawRing.invalidSlotMessage(slotBytes))
        try self.init(checkedCapacity: capacity, slotBytes: slotBytes, allocate: allocate)
    }

    /// A mailbox ring (per entry a ready mark, then `slotBytes`) for a capacity and slot
    /// size validated before (an MPSCQueue's Shape); debug builds still assert. The
    /// entries start zeroed: every mark says "never published" (B2).
    @inline(__always)
    init(tryMailboxCapacity capacity: Int, slotBytes: Int) throws(RingAllocationError) {
        assert(RawRing.isValid(capacity: capacity), RingCapacityError(requested: capacity).description)
        assert(RawRing.isValid(slotBytes: slotBytes), RawRing.invalidSlotMessage(slotBytes))
        let stride = RawRing.markBytes + slotBytes
        try self.init(checkedCapacity: capacity, slotBytes: stride, allocate: RawRing.allocateBlock)
        UnsafeMutableRawPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0, count: capacity * stride)
    }

    /// Both inits' allocation, once their checks are done.
    @inline(__always)
    private init(checkedCapacity capacity: Int, slotBytes: Int, allocate: (_ bytes: Int) -> UnsafeMutableRawPointer?)
    throws(RingAllocationError) {
        let size = RawRing.allocationSize(capacity: capacity, slotBytes: slotBytes)
        guard let block = allocate(size) else {
            throw RingAllocationError(capacity: capacity, bytes: size)
        }
        ring = block.bindMemory(to: ck_ring_t.self, capacity: 1)
        // The slots stay as malloc left them: none is read before it is written (B2).
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

    /// Rebuilds the handle from `block` (what `block` returned); no allocation.
    @inlinable package init(block: UnsafeMutableRawPointer) {
        ring = block.assumingMemoryBound(to: ck_ring_t.self)
        buffer = (block + RawRing.headerBytes).assumingMemoryBound(to: ck_ring_buffer_t.self)
    }

    /// The start of the allocation (the ck_ring header); see `init(block:)`.
    @inlinable package var block: UnsafeMutableRawPointer { UnsafeMutableRawPointer(ring) }

    /// True when no producer holds a claimed-but-uncommitted slot and nothing is left to
    /// dequeue. Consumer side only.
    @inlinable package var isQuiescent: Bool { ckshim_ring_is_quiescent(ring) }

    /// Frees the ring. Entries still inside are not touched: drain them first.
    package func deallocate() {
        free(UnsafeMutableRawPointer(ring))
    }

    /// Slots in the ring (it holds at most `capacity - 1`).
    @inlinable package var capacity: Int { Int(ckshim_ring_capacity(ring)) }

    /// Entries currently published (a snapshot; exact only when no thread is active).
    @inlinable package var count: Int { Int(ckshim_ring_size(ring)) }

    /// `count == 0`, with two loads and a compare (a snapshot, as `count`).
    @inlinable package var isEmpty: Bool { ckshim_ring_is_empty(ring) }

    // MARK: word-sized entries (any 64-bit pattern, zero included)

    /// Multi-producer enqueue of a raw 64-bit word. False when full.
    @inlinable @inline(__always)
    package func enqueueMultiProducer(word: UInt) -> Bool {
        ckshim_ring_enqueue_mpmc(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Multi-producer enqueue of a raw word whose commit wait yields the CPU after a short
    /// spin (ckshim_ring_enqueue_mp_yielding), so a preempted producer does not stall the
    /// ones behind it for whole time slices. False when full.
    @inlinable @inline(__always)
    package func enqueueMultiProducerYielding(word: UInt) -> Bool {
        ckshim_ring_enqueue_mp_yielding(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Single-producer enqueue of a raw 64-bit word. False when full.
    @inlinable @inline(__always)
    package func enqueueSingleProducer(word: UInt) -> Bool {
        ckshim_ring_enqueue_spsc(ring, buffer, UnsafeRawPointer(bitPattern: word))
    }

    /// Single-consumer dequeue of a raw word into `word`. False when empty.
    @inlinable @inline(__always)
    package func dequeueSingleConsumer(word: inout UInt) -> Bool {
        withUnsafeMutablePointer(to: &word) { ckshim_ring_dequeue_spsc(ring, buffer, $0) }
    }

    // MARK: mailbox entries (in place; see ckshim.h, "Ready marks")

    /// Claims the next mailbox entry (multi-producer) and returns its slot; nil when full.
    /// Write the item, then `publishMultiProducer(slot:ticket:)` at once: until then the
    /// consumer waits at this entry.
    @inlinable @inline(__always)
    package func reserveMultiProducer(slotBytes: Int, ticket: inout UInt32) -> UnsafeMutableRawPointer? {
        // Unprotected: `&ticket` handed to C would otherwise give every send a stack
        // canary; the C function only stores the ticket. The reserve returns the slot.
        _withUnprotectedUnsafeMutablePointer(to: &ticket) {
            ckshim_ring_reserve_mp_sized(ring, UnsafeMutableRawPointer(buffer) + RawRing.markBytes,
                                         RawRing.entryStride(slotBytes: slotBytes), $0)
        }
    }

    /// Publishes `slot`: one release store of its entry's ready mark. Never waits.
    @inlinable @inline(__always)
    package func publishMultiProducer(slot: UnsafeMutableRawPointer, ticket: UInt32) {
        ckshim_ring_publish_mp(ring, slot, ticket)
    }

    /// The consumer index, c_head (single consumer). Only the consumer writes it, so a
    /// drain reads it once and carries it through its peeks and releases.
    @inlinable @inline(__always)
    package var consumerHeadSingleConsumer: UInt32 { ckshim_ring_head_sc(ring) }

    /// The slot of entry `head` when it is published, else nil (single consumer). Move the
    /// item out, then `releaseSingleConsumer(to: head &+ 1)`.
    @inlinable @inline(__always)
    package func peekSingleConsumer(at head: UInt32, slotBytes: Int) -> UnsafeMutableRawPointer? {
        ckshim_ring_peek_sc_at(ring, UnsafeMutableRawPointer(buffer), RawRing.entryStride(slotBytes: slotBytes), head)
    }

    /// `peekSingleConsumer(at:slotBytes:)` for a drain's looks after its first: when nothing
    /// is claimed it answers from the producer index, without reading the entry.
    @inlinable @inline(__always)
    package func peekNextSingleConsumer(at head: UInt32, slotBytes: Int) -> UnsafeMutableRawPointer? {
        ckshim_ring_peek_sc_next(ring, UnsafeMutableRawPointer(buffer), RawRing.entryStride(slotBytes: slotBytes), head)
    }

    /// True when the entry at the consumer index is published: the next peek returns it
    /// (single consumer; acquire).
    @inlinable @inline(__always)
    package func headIsReadySingleConsumer(slotBytes: Int) -> Bool {
        peekSingleConsumer(at: consumerHeadSingleConsumer, slotBytes: slotBytes) != nil
    }

    /// Mailbox entries claimed and not yet consumed (a snapshot; 0 while sealed). `count`
    /// is ck's p_tail-based count.
    @inlinable package var claimedCount: Int { Int(ckshim_ring_claimed_count(ring)) }

    /// The owning MPSCQueue's count of items taken, kept beside c_head (ckshim.h; relaxed:
    /// the consumer writes it, anyone reads it).
    @inlinable package var takenCount: Int {
        get { Int(truncatingIfNeeded: ckshim_ring_taken_load(ring)) }
        nonmutating set { ckshim_ring_taken_store(ring, UInt64(truncatingIfNeeded: newValue)) }
    }

    /// The owning MPSCQueue's overflow list, nil until its first overflow append (release
    /// store, acquire load).
    @inlinable var overflowListBase: UnsafeMutableRawPointer? {
        get { ckshim_ring_overflow_load(ring) }
        nonmutating set { ckshim_ring_overflow_store(ring, newValue) }
    }

    /// Seals an empty, quiescent ring (MailboxQueue.md, "Giving the ring back"): every
    /// later claim sees it full. False when a producer claimed first. Single consumer.
    @inlinable package func seal() -> Bool { ckshim_ring_seal(ring) }

    /// Undoes `seal()` (the ring stays): p_head back to c_head. Single consumer, on a
    /// sealed ring.
    @inlinable package func unseal() { ckshim_ring_unseal(ring) }

    /// Frees the slot `peekSingleConsumer(at:slotBytes:)` returned for reuse by producers:
    /// the consumer index becomes `next`, that entry's ticket + 1.
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

    /// Enqueue from any thread. Lock-free claim, then an in-order commit (may spin behind a
    /// preempted earlier producer). False when full.
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

    /// Dequeue with other consumers racing (stealing). Lock-free: retries its CAS until it
    /// takes an entry or sees the ring empty. Nil when empty.
    @inlinable @inline(__always)
    package func dequeueMultiConsumer() -> UnsafeMutableRawPointer? {
        var out: UnsafeMutableRawPointer? = nil
        return ckshim_ring_dequeue_mpmc(ring, buffer, &out) ? out : nil
    }

    /// One attempt at a multi-consumer dequeue: nil when empty *or* when another consumer
    /// won the race (the caller may retry or move on — used by thieves).
    @inlinable @inline(__always)
    package func tryDequeueMultiConsumer() -> UnsafeMutableRawPointer? {
        var out: UnsafeMutableRawPointer? = nil
        return ckshim_ring_trydequeue_mpmc(ring, buffer, &out) ? out : nil
    }
}
