// RunQueue: one worker's bounded local run queue, a single-producer, multi-consumer
// ck_ring. Only the owning worker pushes (wait-free); the owner pops and idle workers
// steal with the multi-consumer CAS, so exactly one wins each entry. A thief takes up to
// ⌈n/2⌉ entries into its own empty queue. A full ring moves its older half, then the new
// entry, to the injection queue in order (SchedulerProtocols.md, "The worker loop").
// Entries are ScheduledUnit pointers, retained iff the unit has no owner (L1).
//
// Roles are types: `RunQueue` is the noncopyable owner handle (push, pop);
// `RunQueue.Stealer` every other thread's (count, stealHalf). Debug builds report an
// owner operation from a second thread (`confinementViolationHook`).

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A worker's local run queue: the owner's handle (push, pop).
struct RunQueue: ~Copyable {
    let ring: RawRing
    #if DEBUG
    let confinement: RunQueueConfinement
    #endif

    /// A new ring with its owner handle (a spare's queue, tests).
    init(capacity: Int) {
        self.init(owning: Stealer(capacity: capacity))
    }

    /// The owner handle of `stealer`'s ring. Once per ring (debug builds check).
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

    /// Owner only. Wait-free. False when full.
    @inline(__always)
    func push(_ unit: UnsafeMutableRawPointer) -> Bool {
        assertOwnerThread("push")
        return ring.enqueueSingleProducer(unit)
    }

    /// Owner only. Lock-free.
    @inline(__always)
    func pop() -> UnsafeMutableRawPointer? {
        assertOwnerThread("pop")
        return ring.dequeueMultiConsumer()
    }

    /// Entries published (snapshot).
    var count: Int { ring.count }

    /// `count == 0` (snapshot), cheaper.
    var isEmpty: Bool { ring.isEmpty }

    /// Most entries one push can be refused with: capacity − 1.
    var usableCapacity: Int { ring.capacity - 1 }

    /// Debug builds: reports the call unless on the thread that owns this queue (also for the
    /// Worker's next-slot puts). Release builds: nothing.
    @inline(__always)
    func assertOwnerThread(_ operation: StaticString) {
        #if DEBUG
        confinement.check(operation)
        #endif
    }

    /// The handle for every thread but the owner: a snapshot count and stealing half.
    struct Stealer: @unchecked Sendable {
        // @unchecked: a Stealer only dequeues with the multi-consumer CAS, which any thread may do.
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

        /// Thief: takes up to half (rounded up); returns the first, pushes the rest onto `into`,
        /// the thief's own empty queue of the same capacity.
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
                    // Every thief's queue has this capacity and is empty: trap rather than lose a unit.
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
    /// Debug builds only: receives each confinement violation instead of trapping (tests).
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

/// Debug builds only: the owner thread of one run queue, bound by the first owner
/// operation (a relaxed CAS: it only names a thread).
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
