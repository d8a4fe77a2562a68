// MPSCQueue — the unbounded, lock-free-on-the-hot-path, multi-producer single-consumer
// queue of 64-bit words under every mailbox (FastMailbox.Mailbox) and every native actor
// executor (MNSerialExecutor). Built on one ck_ring plus an ordered overflow list.
//
// ## Words
// Producers enqueue 64-bit words (a retained object pointer, a boxed value, or a small
// trivially-copyable value stored inline); the queue never interprets them.
//
// ## State word (`state`, one Atomic<Int>)
//   bits 0...61  count: items inserted *and counted* minus items consumed
//   bit  62      closed
// Producer: insert (ring commit or overflow append) THEN `state += 1` (acq_rel). The
// producer whose increment found count == 0 is told `becameNonEmpty` and must schedule
// the consumer: that is the only way the consumer starts running.
// Consumer: snapshot n = count, take at most min(n, max) items, hand them to the body,
// THEN `state -= taken` (acq_rel). If that leaves count == 0 the consumer must stop: the
// next increment from 0 schedules it again. Because every counted item was inserted
// before it was counted, the consumer never takes an item it cannot see... except that
// an inserted-but-not-yet-counted item may be visible; limiting a batch to n keeps count
// from going negative. Invariants:
//   (S1) count > 0  ⇔  exactly one consumer turn is scheduled, running or due;
//   (S2) every item whose increment happened is drained by a later consumer turn;
//   (S3) count never goes below 0.
//
// ## Ring, then overflow (the full-ring policy: grow, never lose, never block)
// The ring (capacity slots, capacity − 1 usable) is allocated on the first enqueue, so an
// idle queue costs no ring. A producer that finds the ring full, or finds
// `overflowActive` set, takes the overflow path: under the overflow spin lock it re-checks the
// flag; if clear it retries the ring; otherwise (or if the ring is still full) it sets the
// flag and appends. While the flag is set every producer appends, so a producer's later
// messages never overtake its earlier overflowed ones. The consumer drains, in this
// order: its private `pending` batch, the ring, and only when the ring is *quiescent*
// (p_head == c_head: nothing claimed and uncommitted) the overflow list, which it takes
// whole and clears the flag in the same critical section. Why quiescent and not merely
// "dequeue found nothing": a producer may have claimed a ring slot, then (after its commit)
// appended its next message to the overflow; taking the overflow before that slot is
// committed would deliver the two out of order. With the quiescence check under the lock,
// any ring message committed later was claimed after the flag was cleared, so it is newer
// than everything taken. Per-producer FIFO therefore holds across ring and overflow.
// The lock is taken only on the overflow path (a full ring); the steady-state send is one
// ck_ring enqueue plus one atomic increment. `overflowAppends` counts overflow sends so a
// benchmark can show the hot path never took it.
//
// ## Preempted producers
// ck_ring commits in ticket order: a producer preempted between claim and commit hides
// later entries. The consumer then sees count > 0 but nothing to take; drain returns .more
// having taken nothing, and the caller runs it again later (an actor yields its worker
// rather than spinning on it). The producers queued behind it wait in
// ckshim_ring_enqueue_mp_yielding, which spins briefly and then sched_yield()s, so the
// preempted producer gets a core back (ck's own commit spins with `pause` forever: with
// more producers than cores that collapses to one commit per scheduler tick; ring-bench's
// "oversubscribed" row measures both).
//
// ## Close
// markClosed() sets the closed bit; an enqueue that sees it is refused with .closed and the
// caller keeps its item. An enqueue that checked before the bit was set may still land
// after: it is counted, scheduled and drained like any other, so it is never lost (the
// actor layer turns post-close drains into dead letters).

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A multi-producer, single-consumer FIFO of 64-bit words on `ck_ring` with ordered
/// overflow. See the file comment for the algorithm and its invariants.
///
/// Thread-safety: `enqueue`, `isClosed`, `approximateCount` and `markClosed` from any thread;
/// `drain`, `close` and `closeAndTakeAll` only from the single consumer (one thread at a time, with a
/// happens-before edge between successive consumers, as a scheduler's run queue gives).
@usableFromInline
package final class MPSCQueue: @unchecked Sendable {
    /// What an enqueue did.
    @usableFromInline package enum EnqueueResult: Equatable, Sendable {
        /// Accepted; `becameNonEmpty` is true for exactly the enqueue that took the count
        /// from 0 to 1: its caller must get the consumer running.
        case accepted(becameNonEmpty: Bool)
        /// The queue is closed; the item was not taken.
        case closed
    }

    /// What a drain left behind.
    @usableFromInline package enum DrainOutcome: Equatable, Sendable {
        /// Count reached 0: the consumer must stop until the next `becameNonEmpty`.
        case empty
        /// Items remain (or are still being committed): run the consumer again later.
        case more
    }

    @usableFromInline static let closedBit = 1 << 62
    @usableFromInline static let countMask = (1 << 62) - 1

    /// count | closed (see file comment). Written by producers (+1), the consumer (−taken)
    /// and close() (bit 62); all read-modify-writes are acq_rel so an increment is ordered
    /// after its insertion and a decrement after the items were handed out.
    @usableFromInline let state = Atomic<Int>(0)

    /// The ring block, nil until the first enqueue. Written once by the CAS winner
    /// (release), read by everyone (acquire) so the initialised header is visible.
    @usableFromInline let ringBlock = Atomic<UnsafeMutableRawPointer?>(nil)

    /// Set by a producer (under overflowLock) when it appends to the overflow list;
    /// cleared only by the consumer in the same critical section that takes the list.
    /// Producers read it (acquire) before trying the ring.
    @usableFromInline let overflowActive = Atomic<Bool>(false)

    /// The overflow spin lock: a test-and-set flag (CAS acquiring to take, store releasing
    /// to give back), so ThreadSanitizer sees its happens-before edges and an idle queue
    /// carries no mutex allocation. Held only for an append or a swap of the list; waiters
    /// spin briefly, then yield the CPU to a preempted holder.
    @usableFromInline let overflowLock = Atomic<Bool>(false)
    /// Overflow items in arrival order (guarded by overflowLock).
    @usableFromInline var overflowItems: [UInt] = []
    /// Overflow appends ever made (guarded by overflowLock).
    @usableFromInline var overflowAppendCount = 0

    /// Slots of the ring once allocated (validated power of two ≥ 4).
    package let capacity: Int

    // Consumer-private (touched only inside drain/takeAll): items taken from the overflow
    // and not yet handed out.
    @usableFromInline var pending: [UInt] = []
    @usableFromInline var pendingIndex = 0

    /// Creates an empty queue. The ring of `capacity` slots (a power of two ≥ 4) is
    /// allocated on the first enqueue.
    package init(capacity: Int) throws(RingCapacityError) {
        try RawRing.validate(capacity: capacity)
        self.capacity = capacity
    }

    deinit {
        if let block = ringBlock.load(ordering: .acquiring) {
            RawRing(block: block).deallocate()
        }
    }

    // MARK: producers

    /// The ring, allocating it on first use (racing producers: one CAS wins, losers free theirs).
    @inlinable @inline(__always)
    var ring: RawRing {
        if let block = ringBlock.load(ordering: .acquiring) { return RawRing(block: block) }
        return allocateRing()
    }

    @usableFromInline @inline(never)
    func allocateRing() -> RawRing {
        let fresh = RawRing(capacity: capacity)
        let (won, current) = ringBlock.compareExchange(
            expected: nil, desired: fresh.block, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if won { return fresh }
        fresh.deallocate()
        return RawRing(block: current!)
    }

    /// Enqueues `word` from any thread. Lock-free unless the ring is full (then one short
    /// critical section appends to the ordered overflow). Never fails for lack of space.
    @inlinable @inline(__always)
    package func enqueue(word: UInt) -> EnqueueResult {
        if state.load(ordering: .relaxed) & MPSCQueue.closedBit != 0 { return .closed }
        let ring = self.ring
        if overflowActive.load(ordering: .acquiring) || !ring.enqueueMultiProducerYielding(word: word) {
            enqueueSlow(word: word, ring: ring)
        }
        let old = state.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        return .accepted(becameNonEmpty: old & MPSCQueue.countMask == 0)
    }

    /// Ring-only enqueue: refuses instead of overflowing. Returns nil when the ring is full
    /// or the overflow is in use (the caller keeps its item and may retry).
    @inlinable @inline(__always)
    package func tryEnqueue(word: UInt) -> EnqueueResult? {
        if state.load(ordering: .relaxed) & MPSCQueue.closedBit != 0 { return .closed }
        let ring = self.ring
        if overflowActive.load(ordering: .acquiring) || !ring.enqueueMultiProducerYielding(word: word) { return nil }
        let old = state.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        return .accepted(becameNonEmpty: old & MPSCQueue.countMask == 0)
    }

    @usableFromInline @inline(never)
    func enqueueSlow(word: UInt, ring: RawRing) {
        withOverflowLock {
            if !overflowActive.load(ordering: .relaxed), ring.enqueueMultiProducerYielding(word: word) { return }
            overflowActive.store(true, ordering: .releasing)
            overflowItems.append(word)
            overflowAppendCount += 1
        }
    }

    /// Pointer convenience for `enqueue(word:)`.
    @inlinable @inline(__always)
    package func enqueue(_ pointer: UnsafeMutableRawPointer) -> EnqueueResult {
        enqueue(word: UInt(bitPattern: pointer))
    }

    // MARK: consumer

    /// Hands up to `max` words, in FIFO order per producer, to `body`. Consumer only.
    /// Costs one atomic load and one atomic subtract per batch, plus the ring dequeues.
    @inlinable
    package func drain(max: Int, _ body: (UInt) -> Void) -> DrainOutcome {
        let available = state.load(ordering: .acquiring) & MPSCQueue.countMask
        let limit = Swift.min(max, available)
        guard limit > 0 else { return available == 0 ? .empty : .more }
        var taken = 0
        var word: UInt = 0
        let ring = self.ring
        while taken < limit {
            if pendingIndex < pending.count {
                word = pending[pendingIndex]
                pendingIndex += 1
            } else if ring.dequeueSingleConsumer(word: &word) {
                // taken from the ring
            } else if takeOverflowIfQuiescent(ring) {
                continue
            } else {
                break  // a producer is between claim and commit: come back later
            }
            body(word)
            taken += 1
        }
        if taken == 0 { return .more }
        let old = state.wrappingSubtract(taken, ordering: .acquiringAndReleasing).oldValue
        return (old & MPSCQueue.countMask) == taken ? .empty : .more
    }

    /// Pointer convenience for `drain(max:_:)` (every word must have been a pointer).
    @inlinable
    package func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> DrainOutcome {
        drain(max: max) { (word: UInt) in body(UnsafeMutableRawPointer(bitPattern: word)!) }
    }

    /// Moves the overflow list into `pending` if the ring is quiescent. Consumer only.
    @usableFromInline @inline(never)
    func takeOverflowIfQuiescent(_ ring: RawRing) -> Bool {
        guard overflowActive.load(ordering: .acquiring) else { return false }
        return withOverflowLock {
            guard ring.isQuiescent, !overflowItems.isEmpty else { return false }
            pending = overflowItems
            pendingIndex = 0
            overflowItems = []
            overflowActive.store(false, ordering: .releasing)
            return true
        }
    }

    /// Closes the queue: later enqueues are refused with `.closed`. Any thread; idempotent.
    /// Returns true for the call that closed it.
    @discardableResult
    package func markClosed() -> Bool {
        let old = state.bitwiseOr(MPSCQueue.closedBit, ordering: .acquiringAndReleasing).oldValue
        return old & MPSCQueue.closedBit == 0
    }

    /// Closes the queue and hands back every counted item, in order. Consumer only.
    /// (An enqueue racing with close may still land afterwards; it is counted and will be
    /// reported by the next `becameNonEmpty`, see the file comment.)
    package func closeAndTakeAll() -> [UInt] {
        markClosed()
        var out: [UInt] = []
        while true {
            let outcome = drain(max: Int.max) { out.append($0) }
            if outcome == .empty { return out }
            if state.load(ordering: .acquiring) & MPSCQueue.countMask == 0 { return out }
            ckshim_stall()  // a producer is mid-commit; it finishes in a few instructions
        }
    }

    /// Pointer form of `closeAndTakeAll()`; the shape MNSerialExecutor uses.
    package func close() -> [UnsafeMutableRawPointer] {
        closeAndTakeAll().map { UnsafeMutableRawPointer(bitPattern: $0)! }
    }

    /// True once `close()` ran.
    @usableFromInline package var isClosed: Bool { state.load(ordering: .acquiring) & MPSCQueue.closedBit != 0 }

    /// Items counted and not yet drained (a snapshot).
    package var approximateCount: Int { state.load(ordering: .relaxed) & MPSCQueue.countMask }

    /// How many enqueues ever took the overflow path (0 means every send stayed lock-free).
    package var overflowAppends: Int { withOverflowLock { overflowAppendCount } }

    /// Runs `body` holding the overflow spin lock.
    @usableFromInline
    func withOverflowLock<R>(_ body: () -> R) -> R {
        var spins = 0
        while !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            spins += 1
            if spins < 64 { ckshim_stall() } else { sched_yield(); spins = 0 }
        }
        defer { overflowLock.store(false, ordering: .releasing) }
        return body()
    }

    /// Bytes the ring occupies once allocated (0 before the first enqueue).
    package var ringBytes: Int {
        ringBlock.load(ordering: .relaxed) == nil ? 0 : RawRing.allocationSize(capacity: capacity)
    }
}
