// InjectionQueue: the shared queue for work submitted from outside the pool and for
// overflow from full local queues. A ring of ready-marked entries (ckshim.h, "Ready
// marks"), plus an ordered spill list, so it never refuses work.
//  (J1) Producers never wait for each other while the ring has room: a push claims an
//       entry (a CAS on p_head), writes the unit and publishes it (one release store of its
//       mark). One preempted between its claim and its publish delays only the entries
//       behind it. Only the spill (J3) takes a lock.
//  (J2) One consumer at a time: a consumer takes entries only while it holds `consuming`,
//       a try-lock nobody waits for. A worker that finds it held looks elsewhere.
//  (J3) Spill: a push that finds the ring full, or the spill in use, appends to the spill
//       under `spill` (a lock: the slow path). A consumer takes spilled entries only from
//       a ring with nothing claimed, oldest first, moving the rest back into the ring. So
//       one producer's entries come out in the order it pushed them.
//  (J4) Close (`close(handingOverTo:)`): an outside push that sees the queue closed before
//       its claim pushes nothing; the spill checks `closed` under its lock. A push that
//       claimed before the close publishes, fences, and if it then sees the queue closed,
//       drains it into the hand-over itself. Every consumer, after it lets go of
//       `consuming`, fences and drains likewise once the queue is closed; so does close.
//       Each side fences (seq_cst: mfence on x86, dmb ish on ARM) between its write and its
//       read, so for (mark, closed) and for (mark, consuming) Dekker's pattern holds: a
//       publish that close's drain missed is drained by its own producer, or by the
//       consumer whose hold made that producer's drain give up.
//       `Models/scheduled_unit.pml` checks it with one unit.
// Entries are ScheduledUnit pointers, retained iff the unit has no owner (L1). The ring
// lives as long as the queue: a producer that claimed before close may still publish.

import CConcurrencyKit
import Synchronization

/// The scheduler's injection queue. Every method may be called from any thread.
final class InjectionQueue: @unchecked Sendable {
    // @unchecked: the ring follows its multi-producer/single-consumer protocol with the
    // consumer side under `consuming` (J2); the spill is under its lock; `handOver` is
    // written once before `closed` is released (J4).

    /// Bytes of an entry's slot: one pointer.
    private static let slotBytes = 8

    let ring: RawRing

    /// Entries in the spill list; written under the lock, read without it.
    let spilled = Atomic<Int>(0)

    /// The spill: entries that found the ring full or the spill in use, oldest first.
    let spill = FutexLock<(items: [UInt], head: Int)>(([], 0))

    /// J2: held by the one thread taking entries.
    private let consuming = Atomic<Bool>(false)

    /// J4: set once, by `close(handingOverTo:)`.
    private let closed = Atomic<Bool>(false)

    /// Where entries go once the queue is closed (J4).
    private var handOver: ((UnsafeMutableRawPointer) -> Void)?

    #if DEBUG
    /// Test hook: called once per push, between its claim and its publish.
    package var pushHookForTesting: (@Sendable () -> Void)?
    /// Test hook: called by `pop` once it holds the queue, before it takes anything.
    package var consumeHookForTesting: (@Sendable () -> Void)?
    #endif

    init(capacity: Int) {
        do {
            ring = try RawRing(callocMailboxCapacity: capacity, slotBytes: InjectionQueue.slotBytes)
        } catch {
            fatalError("InjectionQueue: \(error)")
        }
    }

    deinit { ring.deallocate() }

    // MARK: producers

    /// Adds an entry (a pool worker's push: no close check); J1, or the spill (J3).
    func push(_ unit: UnsafeMutableRawPointer) {
        if spilled.load(ordering: .acquiring) == 0, publish(unit) { return }
        spill.withLock { spill in
            append(UInt(bitPattern: unit), &spill)
        }
    }

    /// Adds entries in order.
    func push(contentsOf units: [UnsafeMutableRawPointer]) {
        for unit in units { push(unit) }
    }

    /// Adds an entry from outside the pool: false, with nothing pushed, once the queue is
    /// closed. After true the caller fences (`SchedulerCore.notifyParked`) and then calls
    /// `settleAfterPush()` (J4).
    @inline(__always)
    func pushUnlessClosed(_ unit: UnsafeMutableRawPointer) -> Bool {
        if closed.load(ordering: .acquiring) { return false }
        if spilled.load(ordering: .acquiring) == 0, publish(unit) { return true }
        return spill.withLock { spill in
            if closed.load(ordering: .relaxed) { return false }
            append(UInt(bitPattern: unit), &spill)
            return true
        }
    }

    /// J4, after an outside push and the caller's seq_cst fence: a push that claimed before
    /// the close drains what the hand-back could not see.
    @inline(__always)
    func settleAfterPush() {
        if _slowPath(closed.load(ordering: .acquiring)) { drainAfterClose() }
    }

    /// J1: claim, write, publish; false when the ring is full.
    @inline(__always)
    private func publish(_ unit: UnsafeMutableRawPointer) -> Bool {
        var ticket: UInt32 = 0
        guard let slot = ring.reserveMultiProducer(slotBytes: InjectionQueue.slotBytes, ticket: &ticket) else { return false }
        #if DEBUG
        pushHookForTesting?()
        #endif
        slot.storeBytes(of: UInt(bitPattern: unit), as: UInt.self)
        ring.publishMultiProducer(slot: slot, ticket: ticket)
        return true
    }

    /// Under the spill lock: the ring if the spill is empty and the ring has room, else the spill.
    private func append(_ word: UInt, _ spill: inout (items: [UInt], head: Int)) {
        if spill.head == spill.items.count, publish(UnsafeMutableRawPointer(bitPattern: word)!) { return }
        spill.items.append(word)
        spilled.store(spill.items.count - spill.head, ordering: .releasing)
    }

    // MARK: consumers

    /// Takes the oldest entry; nil when nothing is ready or another consumer holds the
    /// queue (J2).
    func pop() -> UnsafeMutableRawPointer? { pop(extra: { _ in 0 }, into: { _ in }) }

    /// Takes the oldest entry, then up to `extra(count)` more into `more`, where `count` is
    /// what was left queued; nil when nothing is ready or another consumer holds the queue (J2).
    @inline(__always)
    func pop(extra: (Int) -> Int, into more: (UnsafeMutableRawPointer) -> Void) -> UnsafeMutableRawPointer? {
        guard hasReadyWork, beginConsuming() else { return nil }
        #if DEBUG
        consumeHookForTesting?()
        #endif
        let first = popConsuming()
        if first != nil {
            let batch = extra(count)
            var moved = 0
            while moved < batch, let unit = popConsuming() {
                more(unit)
                moved += 1
            }
        }
        endConsuming()
        return first
    }

    /// J2: the try-lock.
    @inline(__always)
    private func beginConsuming() -> Bool {
        consuming.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    /// J2 and J4: lets go, then fences and, once closed, drains what a producer left.
    private func endConsuming() {
        consuming.store(false, ordering: .releasing)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if _slowPath(closed.load(ordering: .acquiring)) && hasReadyWork { drainAfterClose() }
    }

    /// The next entry, holding `consuming`: the ring's head once published; the spill only
    /// while nothing is claimed in the ring (J3).
    private func popConsuming() -> UnsafeMutableRawPointer? {
        let head = ring.consumerHeadSingleConsumer
        if let slot = ring.peekSingleConsumer(at: head, slotBytes: InjectionQueue.slotBytes) {
            let word = slot.load(as: UInt.self)
            ring.releaseSingleConsumer(to: head &+ 1)
            return UnsafeMutableRawPointer(bitPattern: word)
        }
        guard spilled.load(ordering: .acquiring) > 0, ring.isQuiescent else { return nil }
        // Words, not pointers, cross the lock: UInt is Sendable.
        let word = spill.withLock { spill -> UInt in
            guard spill.head < spill.items.count else { return 0 }
            let first = spill.items[spill.head]
            spill.head += 1
            while spill.head < spill.items.count, publish(UnsafeMutableRawPointer(bitPattern: spill.items[spill.head])!) {
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

    // MARK: close

    /// J4: from now on outside pushes are refused, and entries that still arrive go to
    /// `handOver`. Then drains into it everything ready. Once.
    func close(handingOverTo handOver: @escaping (UnsafeMutableRawPointer) -> Void) {
        self.handOver = handOver
        closed.store(true, ordering: .sequentiallyConsistent)
        passSpill()
        drainAfterClose()
    }

    /// Waits for every spill critical section under way (J4: a spilling push that read
    /// `closed` false has appended when this returns).
    private func passSpill() {
        spill.withLock { _ in }
    }

    /// J4: drains into the hand-over until nothing is ready, unless another consumer holds
    /// the queue (it drains after it lets go). Also shutdown's, once the workers left: what
    /// they pushed after close.
    func drainAfterClose() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard let handOver else { return }
        while hasReadyWork, beginConsuming() {
            while let unit = popConsuming() { handOver(unit) }
            consuming.store(false, ordering: .releasing)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
    }

    // MARK: snapshots

    /// True when an entry can be taken now: the ring's head is published, or entries are
    /// spilled and nothing is claimed in the ring. A hint; the parking check's look (W2).
    var hasReadyWork: Bool {
        ring.headIsReadyAnyThread(slotBytes: InjectionQueue.slotBytes)
            || (spilled.load(ordering: .acquiring) > 0 && ring.claimedCount == 0)
    }

    /// True when nothing is claimed, published or spilled (a snapshot; two loads and a
    /// compare, for the hot path's looks).
    var isEmpty: Bool { ring.claimedCount == 0 && spilled.load(ordering: .relaxed) == 0 }

    /// Entries queued, claimed ones included (a snapshot).
    var count: Int { ring.claimedCount + spilled.load(ordering: .acquiring) }
}
