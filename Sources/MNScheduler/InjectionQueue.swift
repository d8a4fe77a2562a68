// InjectionQueue — the shared queue for work submitted from outside the pool and for
// overflow from full local queues.
//
// Algorithm: a multi-producer, multi-consumer ck_ring (lock-free enqueue and dequeue;
// the enqueue may spin while an earlier producer commits), backed by an ordered spill
// list for when the ring is full, so the queue is unbounded and never refuses work.
// Spill order: a producer that finds the ring full, or finds `spilled > 0`, appends to
// the spill list under its lock; while the spill is non-empty every producer appends,
// so one producer's later entries never overtake its earlier spilled ones. A consumer
// that finds the ring empty takes the spill's oldest entry and, in the same critical
// section, moves as many more as fit into the ring, oldest first, then publishes the new
// spill size. Consumers are workers: at every 61st turn, when their own queues are empty,
// and while searching.
// Entries are retained ScheduledUnit pointers, owned by whoever pops them.

import CConcurrencyKit
import Synchronization

/// The scheduler's injection queue. Every method may be called from any thread.
final class InjectionQueue: @unchecked Sendable {
    // @unchecked: `ring` is shared under ck_ring's MPMC protocol; `spill` is a Mutex.

    let ring: RawRing

    /// Entries in `spill`. Written under `spill`'s lock (release), read by producers
    /// (acquire) before trying the ring and by `isEmpty`. A stale non-zero read only sends
    /// a producer to the lock, where it appends in order; a stale zero read sends it to the
    /// ring, which is fine because its own earlier entries, if spilled, would be counted.
    let spilled = Atomic<Int>(0)

    /// Entries that did not fit in the ring, oldest first (head index into the array).
    let spill = Mutex<(items: [UInt], head: Int)>(([], 0))

    init(capacity: Int) {
        ring = RawRing(capacity: capacity)
    }

    deinit { ring.deallocate() }

    /// Adds an entry. Lock-free unless the ring is full or spilling.
    func push(_ unit: UnsafeMutableRawPointer) {
        if spilled.load(ordering: .acquiring) == 0, ring.enqueueMultiProducer(unit) { return }
        spill.withLock { spill in
            if spilled.load(ordering: .relaxed) == 0, ring.enqueueMultiProducer(unit) { return }
            spill.items.append(UInt(bitPattern: unit))
            spilled.store(spill.items.count - spill.head, ordering: .releasing)
        }
    }

    /// Adds entries in order (overflow from a local queue).
    func push(contentsOf units: [UnsafeMutableRawPointer]) {
        for unit in units { push(unit) }
    }

    /// Takes the oldest entry, nil when empty.
    func pop() -> UnsafeMutableRawPointer? {
        if let p = ring.dequeueMultiConsumer() { return p }
        guard spilled.load(ordering: .acquiring) > 0 else { return nil }
        // Words, not pointers, cross the lock: UInt is Sendable.
        let word = spill.withLock { spill -> UInt in
            // Entries in the ring are older than any spilled one of the same producer.
            if let p = ring.dequeueMultiConsumer() { return UInt(bitPattern: p) }
            guard spill.head < spill.items.count else { return 0 }
            let first = spill.items[spill.head]
            spill.head += 1
            while spill.head < spill.items.count,
                  ring.enqueueMultiProducer(UnsafeMutableRawPointer(bitPattern: spill.items[spill.head])!) {
                spill.head += 1
            }
            if spill.head == spill.items.count {
                spill.items.removeAll(keepingCapacity: true)
                spill.head = 0
            }
            spilled.store(spill.items.count - spill.head, ordering: .releasing)
            return first
        }
        return UnsafeMutableRawPointer(bitPattern: word)
    }

    /// True when nothing is queued (a snapshot).
    var isEmpty: Bool { ring.count == 0 && spilled.load(ordering: .acquiring) == 0 }

    /// Entries queued (a snapshot).
    var count: Int { ring.count + spilled.load(ordering: .acquiring) }
}
