// RunQueue — one worker's bounded local run queue on ck_ring.
//
// Algorithm: a single-producer, multi-consumer ring (ck's "spmc" shape). Only the owning
// worker pushes (enqueueSingleProducer: wait-free). The owner pops and idle workers steal
// with the multi-consumer dequeue (a CAS on the consumer head: lock-free), so owner and
// thieves may race for the same entry and exactly one wins it.
// Stealing takes half: a thief reads the victim's count n and takes up to ⌈n/2⌉ entries
// one by one (each a CAS; the batch is not atomic, which only means a racing owner or
// another thief may get some of them). The first stolen entry is run by the thief, the
// rest go into the thief's own (empty) local queue, where others may steal them again.
// Overflow: when the owner's push finds the ring full, it moves the older half of its
// queue, then the new entry, to the injection queue, in order (so FIFO across the two
// queues is kept for this worker's entries, as in Go's runqputslow).
// Entries are retained ScheduledUnit pointers (Unmanaged.passRetained at push time);
// whoever pops one owns that retain.

import CConcurrencyKit

/// A worker's local run queue. Push: owner only. Pop/steal: any worker.
struct RunQueue: @unchecked Sendable {
    // @unchecked: RawRing is a handle to memory shared under ck_ring's protocol; the
    // single-producer rule is the caller's (only the owning worker calls push).
    let ring: RawRing

    init(capacity: Int) {
        ring = RawRing(capacity: capacity)
    }

    func deallocate() { ring.deallocate() }

    /// Owner only. Wait-free. False when full (the caller spills to the injection queue).
    @inline(__always)
    func push(_ unit: UnsafeMutableRawPointer) -> Bool {
        ring.enqueueSingleProducer(unit)
    }

    /// Owner (or shutdown after the workers were joined). Lock-free.
    @inline(__always)
    func pop() -> UnsafeMutableRawPointer? {
        ring.dequeueMultiConsumer()
    }

    /// Entries published (snapshot).
    var count: Int { ring.count }

    /// Most entries one push can be refused with: capacity − 1.
    var usableCapacity: Int { ring.capacity - 1 }

    /// Thief: takes up to half (rounded up) of this queue. Returns the first entry to run;
    /// the others are pushed onto `into`, the thief's own local queue (which must have room
    /// for them: it is empty when a worker steals, and has the same capacity).
    func stealHalf(into: RunQueue) -> UnsafeMutableRawPointer? {
        let n = count
        guard n > 0 else { return nil }
        let want = (n + 1) / 2
        var first: UnsafeMutableRawPointer?
        var taken = 0
        while taken < want {
            guard let p = ring.tryDequeueMultiConsumer() else {
                if ring.count == 0 { break }
                continue  // lost a race with the owner or another thief: try again
            }
            taken += 1
            if first == nil {
                first = p
            } else if !into.push(p) {
                // Cannot happen: every thief's queue (a worker's or a spare's) has this
                // capacity and is empty when it steals. Trap, naming it, rather than lose it.
                preconditionFailure("RunQueue.stealHalf: the thief's own queue is full")
            }
        }
        return first
    }
}
