// InjectionQueue: the shared queue for work submitted from outside the pool and for
// overflow from full local queues. A ck_ring with one producer side and many consumers,
// plus an ordered spill list, so it never refuses work.
//  - Producers serialise on `producers` (a FutexLock) and use ck's single-producer
//    enqueue. Not ck's multi-producer enqueue: a preempted producer would stall the rest
//    for a timeslice, where a lock waiter sleeps. Outside pushes check `closed` under the
//    lock (`pushUnlessClosed`, C1).
//  - Consumers (workers) use ck's lock-free multi-consumer dequeue.
//  - Spill: a producer that finds the ring full or the spill non-empty appends to the
//    spill (same lock), so its later entries never overtake earlier ones. A consumer that
//    finds the ring empty with `spilled > 0` takes the oldest spilled entry under the lock
//    and refills the ring from the spill, oldest first.
// Entries are ScheduledUnit pointers, retained iff the unit has no owner (L1).

import CConcurrencyKit
import Synchronization

/// The scheduler's injection queue. Every method may be called from any thread.
final class InjectionQueue: @unchecked Sendable {
    // @unchecked: the ring's producer side is written only under `producers`; consumers
    // follow ck_ring's SPMC protocol.

    let ring: RawRing

    /// Entries in the spill list; written under the lock, read without it.
    let spilled = Atomic<Int>(0)

    /// The producer lock: the ring's producer side and the spill (oldest first).
    let producers = FutexLock<(items: [UInt], head: Int)>(([], 0))

    init(capacity: Int) {
        ring = RawRing(capacity: capacity)
    }

    /// Set once the ring was freed early, so deinit does not free it again.
    let ringReleased = Atomic<Bool>(false)

    deinit { if !ringReleased.load(ordering: .acquiring) { ring.deallocate() } }

    /// Frees the ring once no thread can touch it (SchedulerCore.releaseRings); idempotent.
    func releaseRing() {
        if !ringReleased.exchange(true, ordering: .acquiringAndReleasing) { ring.deallocate() }
    }

    /// Adds an entry: one short critical section.
    func push(_ unit: UnsafeMutableRawPointer) {
        producers.withLock { spill in
            append(UInt(bitPattern: unit), &spill)
        }
    }

    /// Adds an entry from outside the pool unless `core` is closed, checked under the lock:
    /// false, with nothing pushed, once it is. With `passProducers()` this keeps C1.
    @inline(__always)
    func pushUnlessClosed(_ unit: UnsafeMutableRawPointer, core: SchedulerCore) -> Bool {
        producers.withLock { spill in
            if core.closed.load(ordering: .relaxed) { return false }
            append(UInt(bitPattern: unit), &spill)
            return true
        }
    }

    /// Waits for every producer critical section under way (C1).
    func passProducers() {
        producers.withLock { _ in }
    }

    /// Adds entries in order, in one critical section.
    func push(contentsOf units: [UnsafeMutableRawPointer]) {
        producers.withLock { spill in
            for unit in units { append(UInt(bitPattern: unit), &spill) }
        }
    }

    /// Under the lock: the ring unless it is full or the spill is in use.
    private func append(_ word: UInt, _ spill: inout (items: [UInt], head: Int)) {
        if spill.head == spill.items.count, ring.enqueueSingleProducer(UnsafeMutableRawPointer(bitPattern: word)!) {
            return
        }
        spill.items.append(word)
        spilled.store(spill.items.count - spill.head, ordering: .releasing)
    }

    /// Takes the oldest entry, nil when empty. Lock-free unless the spill is in use.
    func pop() -> UnsafeMutableRawPointer? {
        if let p = ring.dequeueMultiConsumer() { return p }
        guard spilled.load(ordering: .acquiring) > 0 else { return nil }
        // Words, not pointers, cross the lock: UInt is Sendable.
        let word = producers.withLock { spill -> UInt in
            // Entries in the ring are older than every spilled one.
            if let p = ring.dequeueMultiConsumer() { return UInt(bitPattern: p) }
            guard spill.head < spill.items.count else { return 0 }
            let first = spill.items[spill.head]
            spill.head += 1
            while spill.head < spill.items.count,
                  ring.enqueueSingleProducer(UnsafeMutableRawPointer(bitPattern: spill.items[spill.head])!) {
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
