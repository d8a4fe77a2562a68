// RunQueue — one worker's bounded local run queue on ck_ring, behind two handles.
//
// Algorithm: a single-producer, multi-consumer ring (ck's "spmc" shape). Only the owning
// worker pushes (enqueueSingleProducer: wait-free). The owner pops and idle workers steal
// with the multi-consumer dequeue (a CAS on the consumer head: lock-free), so owner and
// thieves may race for the same entry and exactly one wins it.
// Stealing takes half: a thief takes up to ⌈n/2⌉ entries one CAS at a time (a racing
// owner or thief may get some), runs the first and queues the rest in its own empty
// queue. A full ring moves its older half, then the new entry, to the injection queue in
// order, keeping FIFO for this worker's entries. Entries are ScheduledUnit pointers,
// retained iff the unit has no owner (L1); whoever pops one settles it after the turn (L3).
//
// Roles are types (tokio's queue::Local / queue::Steal):
//  - `RunQueue` is the noncopyable *owner* handle: push and pop. The owning Worker holds
//    it in a `let`.
//  - `RunQueue.Stealer` is every other thread's handle: count and stealHalf only.
// Which thread owns it, a type cannot say: debug builds record the first thread that
// pushes or pops and report any other (`confinementViolationHook`).

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A worker's local run queue: the owner's handle (push, pop). See the file comment.
struct RunQueue: ~Copyable {
    let ring: RawRing
    #if DEBUG
    let confinement: RunQueueConfinement
    #endif

    /// A new ring with its owner handle (a spare's queue, tests). `stealer` gives the
    /// handle for other threads.
    init(capacity: Int) {
        self.init(owning: Stealer(capacity: capacity))
    }

    /// The owner handle of `stealer`'s ring. Call once per ring, for the worker whose queue
    /// it is (debug builds check that).
    init(owning stealer: Stealer) {
        ring = stealer.ring
        #if DEBUG
        confinement = stealer.confinement
        let claimed = confinement.ownerHandleMade.exchange(true, ordering: .relaxed)
        if claimed { RunQueue.reportViolation("a second owner handle was made for one run queue") }
        #endif
    }

    /// The handle other threads may hold: count and steal.
    var stealer: Stealer {
        #if DEBUG
        Stealer(ring: ring, confinement: confinement)
        #else
        Stealer(ring: ring)
        #endif
    }

    /// Frees the ring. Once, when no thread uses either handle.
    func deallocate() { ring.deallocate() }

    /// Owner only. Wait-free. False when full (the caller spills to the injection queue).
    @inline(__always)
    func push(_ unit: UnsafeMutableRawPointer) -> Bool {
        assertOwnerThread("push")
        return ring.enqueueSingleProducer(unit)
    }

    /// Owner only (thieves use `Stealer.stealHalf`). Lock-free.
    @inline(__always)
    func pop() -> UnsafeMutableRawPointer? {
        assertOwnerThread("pop")
        return ring.dequeueMultiConsumer()
    }

    /// Entries published (snapshot).
    var count: Int { ring.count }

    /// `count == 0` (snapshot), cheaper: the worker's loop asks on every next-slot run.
    var isEmpty: Bool { ring.isEmpty }

    /// Most entries one push can be refused with: capacity − 1.
    var usableCapacity: Int { ring.capacity - 1 }

    /// Debug builds: reports the call unless it runs on the thread that owns this queue (the
    /// first to call an owner operation). Release builds: nothing. Also for the owner's
    /// other thread-confined state (the Worker's next-slot puts).
    @inline(__always)
    func assertOwnerThread(_ operation: StaticString) {
        #if DEBUG
        confinement.check(operation)
        #endif
    }

    /// The handle for every thread but the owner: a snapshot count and stealing half.
    struct Stealer: @unchecked Sendable {
        // @unchecked: RawRing is a handle to memory shared under ck_ring's protocol; a
        // Stealer only ever dequeues with the multi-consumer CAS, which any thread may do.
        let ring: RawRing
        #if DEBUG
        let confinement: RunQueueConfinement
        #endif

        /// Allocates a ring; `RunQueue(owning:)` makes its owner handle.
        init(capacity: Int) {
            ring = RawRing(capacity: capacity)
            #if DEBUG
            confinement = RunQueueConfinement()
            #endif
        }

        #if DEBUG
        fileprivate init(ring: RawRing, confinement: RunQueueConfinement) {
            self.ring = ring
            self.confinement = confinement
        }
        #else
        fileprivate init(ring: RawRing) { self.ring = ring }
        #endif

        /// Frees the ring. Once, when no thread uses either handle.
        func deallocate() { ring.deallocate() }

        /// Entries published (snapshot).
        var count: Int { ring.count }

        /// Thief: takes up to half (rounded up) of this queue. Returns the first entry to
        /// run; the others are pushed onto `into`, the thief's own local queue (which must
        /// have room for them: it is empty when a worker steals, and has the same capacity).
        func stealHalf(into: borrowing RunQueue) -> UnsafeMutableRawPointer? {
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
}

#if DEBUG
/// What a debug build reports when a run queue's owner-only operation runs on another thread.
struct RunQueueConfinementViolation: Sendable, CustomStringConvertible {
    let description: String
}

extension RunQueue {
    /// Debug builds only: receives each confinement violation instead of the default
    /// `assertionFailure`, so a test can provoke one and see it reported. nil: trap.
    static let confinementViolationHook = Mutex<(@Sendable (RunQueueConfinementViolation) -> Void)?>(nil)

    @inline(never)
    static func reportViolation(_ message: String) {
        let violation = RunQueueConfinementViolation(description: "RunQueue confinement: \(message)")
        if let hook = confinementViolationHook.withLock({ $0 }) {
            hook(violation)
        } else {
            assertionFailure(violation.description)
        }
    }
}

/// Debug builds only: the owner thread of one run queue, shared by its two handles.
/// `owner` is 0 until the first owner operation binds it (a CAS, relaxed: it orders
/// nothing, it only names a thread).
final class RunQueueConfinement: Sendable {
    let owner = Atomic<UInt>(0)
    let ownerHandleMade = Atomic<Bool>(false)

    @inline(__always)
    func check(_ operation: StaticString) {
        #if canImport(Glibc)
        let me: UInt = pthread_self()  // glibc's pthread_t is an integer
        #else
        let me = unsafeBitCast(pthread_self(), to: UInt.self)
        #endif
        let bound = owner.load(ordering: .relaxed)
        if bound == me { return }
        if bound == 0 {
            let (won, current) = owner.compareExchange(expected: 0, desired: me, ordering: .relaxed)
            if won || current == me { return }
        }
        RunQueue.reportViolation("\(operation) on a thread that does not own the queue")
    }
}
#endif
