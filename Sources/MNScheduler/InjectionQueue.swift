// InjectionQueue — the shared queue for work submitted from outside the pool and for
// overflow from full local queues.
//
// Algorithm: a ck_ring with one producer side and many consumers, backed by an ordered
// spill list so the queue is unbounded and never refuses work.
//  - Producers (outside threads, overflowing workers) serialise on `producers`, a Lock,
//    and use ck's single-producer enqueue. An outside thread's push checks the scheduler's
//    `closed` flag inside that critical section (`pushUnlessClosed`), so shutdown, which
//    sets the flag and then passes through the lock once (`passProducers`), knows that no
//    outside push lands after it. Not ck's multi-producer enqueue: it spins until every
//    earlier ticket is committed, so a preempted producer would stall all the others for
//    a timeslice. A lock waiter sleeps instead, and the critical section is a few stores.
//    The lock is a FutexLock.
//  - Consumers (workers) take entries with ck's multi-consumer dequeue: lock-free, no lock
//    on the hot path.
//  - Spill: a producer that finds the ring full, or finds the spill non-empty, appends to
//    the spill list (same lock), so one producer's later entries never overtake its earlier
//    spilled ones. A consumer that finds the ring empty and `spilled > 0` takes the lock,
//    takes the oldest spilled entry and refills the ring from the spill, oldest first.
// Entries are ScheduledUnit pointers, owned by whoever pops them (retained iff the unit
// has no owner, L1).

import CConcurrencyKit
import Synchronization

/// The scheduler's injection queue. Every method may be called from any thread.
final class InjectionQueue: @unchecked Sendable {
    // @unchecked: `ring` is written only under `producers`' lock (single-producer side)
    // and read by consumers under ck_ring's SPMC protocol.

    let ring: RawRing

    /// Entries in the spill list. Written under the lock (release); read without it
    /// (acquire) by consumers deciding whether to look at the spill, and by `isEmpty`.
    let spilled = Atomic<Int>(0)

    /// The producer lock, guarding the ring's producer side and the spill list (words,
    /// oldest first, with a head index).
    let producers = FutexLock<(items: [UInt], head: Int)>(([], 0))

    init(capacity: Int) {
        ring = RawRing(capacity: capacity)
    }

    /// Set once the ring was freed early (SchedulerCore.releaseRings), so deinit does not
    /// free it again.
    let ringReleased = Atomic<Bool>(false)

    deinit { if !ringReleased.load(ordering: .acquiring) { ring.deallocate() } }

    /// Frees the ring now. Only when no thread can touch the ring again (see
    /// SchedulerCore.releaseRings; a late pushUnlessClosed takes only the lock); idempotent.
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
    /// false, with nothing pushed, once it is. With `passProducers()` after setting
    /// `closed`, no such push lands after shutdown's hand-back (Scheduler.swift, C1): a
    /// critical section that came first has pushed; one that came after acquires the lock
    /// shutdown released after its store, so it reads `closed` as true.
    @inline(__always)
    func pushUnlessClosed(_ unit: UnsafeMutableRawPointer, core: SchedulerCore) -> Bool {
        producers.withLock { spill in
            if core.closed.load(ordering: .relaxed) { return false }
            append(UInt(bitPattern: unit), &spill)
            return true
        }
    }

    /// Waits for every producer critical section under way (an empty one of its own): see
    /// `pushUnlessClosed`.
    func passProducers() {
        producers.withLock { _ in }
    }

    /// Adds entries in order, in one critical section (overflow from a local queue).
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
