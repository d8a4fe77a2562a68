// MPSCQueue: the multi-producer, single-consumer queue under every FastMailbox mailbox and
// every MNSerialExecutor. One ck_ring plus an ordered overflow list; items of `itemBytes`.
//
// The protocols, and why they hold on x86-64 and AArch64, are argued in one place:
// MNScheduler.docc/MailboxQueue.md. Spin models check them: Models/mailbox.pml,
// Models/unit_mailbox.pml, Models/ring_reclaim.pml. The ring's slot ordering is argued in
// ckshim.h, "Ready marks".
//
// Invariants:
//   (S1) consumerIdle == false  ⇔  exactly one consumer turn is running or due.
//   (S2) Every inserted item is drained by a consumer turn that starts after it.
//   (S3) Exactly one becameNonEmpty per idle → busy transition.
//   (FIFO) Items from one producer are handed out in order, across ring and overflow.
//   (NOWAIT) No producer waits for another; a preempted one delays only the consumer.
// With `signalsUnit` the unit's state word replaces consumerIdle, and S1–S3 become
// ScheduledUnit's R1–R3 ("The unit as the idle flag").
//
// Producer: insert into the ring (claim, copy, publish) or, when the ring is full or an
// overflow is active, append to the overflow under its lock; then a store→load fence and
// a look at the idle flag. Consumer: take the pending chain, the ring, and the overflow
// only when the ring is quiescent (FIFO); when dry, store idle, fence, look again.
// These two fenced store-then-load sequences are a Dekker pair: either the consumer sees
// the claim or the producer sees the flag ("Who runs the consumer"). An overflow append
// behind an active overflow needs no fence: its setter's fence covers it.
//
// Also in the article: lingering, waiting for a claimed slot's publish, giving an idle
// ring back (seal, detach, RingEpoch grace period), and where the fields live.

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The type of a queue's items, recorded so that deinit can destroy undrained items.
@usableFromInline
package protocol MPSCQueueItemType {
    /// Moves the item at `item` out of its slot and destroys it.
    static func destroyItem(at item: UnsafeMutableRawPointer)
}

/// The item type of the untyped forms of enqueue: deinit leaves undrained items alone.
@usableFromInline
package enum UntypedItems: MPSCQueueItemType {
    @inlinable package static func destroyItem(at item: UnsafeMutableRawPointer) {}
}

/// A multi-producer, single-consumer FIFO on `ck_ring` with an ordered overflow.
///
/// Thread-safety: `enqueue`, `isClosed`, `approximateCount` and `markClosed` from any
/// thread. `drain` and `releaseIdleRing` only from the single consumer: one thread at a
/// time, with a happens-before edge between successive consumers (a run queue gives one).
/// Never from inside a drain's `body`: drains do not nest.
///
/// A ``ScheduledUnit``, so that a queue's single consumer (an actor cell) can be the
/// queue: one object. Every member is final and package-visible; outside the package
/// the class offers nothing to call. A standalone queue is never scheduled.
open class MPSCQueue: ScheduledUnit, @unchecked Sendable {
    /// What an enqueue did.
    @usableFromInline package enum EnqueueResult: Equatable, Sendable {
        /// Accepted; `becameNonEmpty`: this enqueue took the queue from idle (S3), and its
        /// caller must get the consumer running.
        case accepted(becameNonEmpty: Bool)
        /// The queue is closed; the item was not taken.
        case closed
    }

    /// What a drain left behind.
    @usableFromInline package enum DrainOutcome: Equatable, Sendable {
        /// The queue went idle: the consumer stops until the next `becameNonEmpty`.
        case empty
        /// Items remain, or are being published: run the consumer again later.
        case more
    }

    /// True when no consumer turn is running or due (S1). Producers read it and CAS
    /// true → false; the consumer stores true (seq_cst) when it runs dry and may CAS it back.
    @usableFromInline let consumerIdle = Atomic<Bool>(true)

    /// Set once by markClosed (release); read by producers before inserting.
    @usableFromInline let closed = Atomic<Bool>(false)

    // The one-byte flags are declared together: with ScheduledUnit's state byte they
    // share one word.
    /// Set by an overflow append, cleared by the consumer as it takes the list; both
    /// under overflowLock. Producers read it before trying the ring.
    @usableFromInline let overflowActive = Atomic<Bool>(false)

    /// The overflow spin lock: a CAS takes it, a releasing store gives it back. Held only
    /// for an append or a swap of the list.
    @usableFromInline let overflowLock = Atomic<Bool>(false)

    /// Whether the consumer may give the ring back ("Giving the ring back"). Set at init.
    /// Producers outside a ring epoch section then enter one around their access.
    @usableFromInline package let reclaimable: Bool

    /// The queue is its own consumer, as a scheduled unit, and the unit's state word stands
    /// in for `consumerIdle` ("The unit as the idle flag"). Set at init (Shape).
    @usableFromInline package let signalsUnit: Bool

    // The shape, 32 bits each: with the flags and the ring word, the whole idle queue.
    /// Slots of the ring once allocated (validated power of two ≥ 4, at most 2^20).
    @usableFromInline let capacity32: UInt32
    /// Bytes of one item: 8 for a word queue, at most RawRing.maximumSlotBytes.
    @usableFromInline let itemBytes32: UInt32

    /// The ring block's address (even), or, when odd, no ring and the taken count in
    /// `word >> 1`. Installed by a releasing CAS, read with acquire; only the consumer
    /// takes a ring away, under the overflow lock.
    @usableFromInline let ringWord = Atomic<UInt>(1)

    /// The ring block of `word`, nil when it holds none (odd).
    @inlinable @inline(__always)
    static func block(_ word: UInt) -> UnsafeMutableRawPointer? {
        word & 1 == 0 ? UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped : nil
    }

    /// The current ring block, nil when none. For a reclaimable queue, dereference it only
    /// inside a ring epoch section, or as the consumer.
    @inlinable package final var ringBlock: UnsafeMutableRawPointer? { MPSCQueue.block(ringWord.load(ordering: .acquiring)) }

    /// Slots of the ring once allocated (validated power of two ≥ 4).
    @inlinable package final var capacity: Int { Int(capacity32) }
    /// Bytes of one item: 8 for a word queue.
    @inlinable package final var itemBytes: Int { Int(itemBytes32) }
    /// Bytes of one ring slot: itemBytes rounded up to a multiple of 8.
    @inlinable package final var slotBytes: Int { MPSCQueue.slotBytes(forItemBytes: itemBytes) }
    /// A slot's bytes for items of `itemBytes`: rounded up to a multiple of 8.
    @inlinable static func slotBytes(forItemBytes itemBytes: Int) -> Int { (itemBytes + 7) & ~7 }

    /// Items the consumer has taken out so far; read by anyone. With `approximateCount`
    /// it gives how many items were ever accepted.
    package final var dequeuedCount: Int {
        readingRing { ring, word in ring?.takenCount ?? Int(truncatingIfNeeded: word >> 1) }
    }

    /// Runs `body` with the current ring (nil: none) and its word, inside a ring epoch
    /// section when the queue is reclaimable and this thread is in none. Off the hot path.
    @inlinable
    final func readingRing<R>(_ body: (RawRing?, UInt) -> R) -> R {
        let enter = reclaimable && ckshim_epoch_depth() == 0
        if enter { ckshim_epoch_enter() }
        defer { if enter { ckshim_epoch_exit() } }
        let word = ringWord.load(ordering: .acquiring)
        return body(MPSCQueue.block(word).map(RawRing.init(block:)), word)
    }

    /// The overflow list, nil until the first overflow append (kept in the ring block).
    @inlinable final func overflowList(_ ring: RawRing) -> OverflowList? { ring.overflowListBase.map(OverflowList.init) }

    /// Creates an empty queue of `itemBytes`-byte items (1...RawRing.maximumSlotBytes).
    /// The ring of `capacity` slots (a power of two in 4...RawRing.maximumCapacity) is
    /// allocated on the first enqueue, or by `reserveRing()`. `reclaimable`: the consumer
    /// may give the ring back while idle (`releaseIdleRing()`).
    package convenience init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
        self.init(shape: try Shape(capacity: capacity, itemBytes: itemBytes, reclaimable: reclaimable))
    }

    /// Creates an empty queue of a validated shape (a subclass that is its own queue calls
    /// this).
    @inlinable
    package init(shape: Shape) {
        self.capacity32 = shape.capacity32
        self.itemBytes32 = shape.itemBytes32
        self.reclaimable = shape.reclaimable
        self.signalsUnit = shape.signalsUnit
        super.init()
    }

    /// A queue's validated shape: ring capacity, item size, whether the ring may be given
    /// back. Made before the queue, so an owner that is its own queue (an actor cell) can
    /// report a bad capacity before it exists.
    @usableFromInline package struct Shape: Sendable {
        @usableFromInline let capacity32: UInt32
        @usableFromInline let itemBytes32: UInt32
        @usableFromInline let reclaimable: Bool
        /// The queue's consumer is the queue itself; its state word is the idle flag.
        @usableFromInline package private(set) var signalsUnit = false

        /// Validates `capacity` (a power of two in 4...RawRing.maximumCapacity); traps on an
        /// `itemBytes` outside 1...RawRing.maximumSlotBytes (a programming error).
        /// Inlinable, so a spawn's constant shape is checked at compile time.
        @inlinable
        package init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
            try RawRing.validate(capacity: capacity)
            precondition(itemBytes >= 1 && itemBytes <= RawRing.maximumSlotBytes,
                         "MPSCQueue: items of \(itemBytes) bytes (1...\(RawRing.maximumSlotBytes))")
            capacity32 = UInt32(truncatingIfNeeded: capacity)
            itemBytes32 = UInt32(truncatingIfNeeded: itemBytes)
            self.reclaimable = reclaimable
        }

        /// Slots of the ring once allocated.
        @inlinable package var capacity: Int { Int(capacity32) }

        /// This shape for a queue whose single consumer is the queue itself, scheduled as a
        /// unit (an event-actor cell): its state word is the idle flag.
        @inlinable package func signallingUnit() -> Shape {
            var shape = self
            shape.signalsUnit = true
            return shape
        }

        /// The smallest shape (4 word slots), for a subclass that never uses its queue
        /// (FastMailbox's pool router): no ring is ever allocated for it.
        package static var unused: Shape { Shape(capacity32: 4, itemBytes32: 8, reclaimable: false) }

        private init(capacity32: UInt32, itemBytes32: UInt32, reclaimable: Bool) {
            self.capacity32 = capacity32
            self.itemBytes32 = itemBytes32
            self.reclaimable = reclaimable
        }
    }

    deinit {
        if let block = ringBlock {
            let ring = RawRing(block: block)
            // A typed queue destroys what nobody drained. No producer can be between
            // claim and publish now, so one drain takes everything.
            if let itemType = ring.itemType {
                _ = drain(max: Int.max, taking: { itemType.destroyItem(at: $0) }, { _ in })
            }
            // With any chunks left (an untyped owner drains what it must release first).
            overflowList(ring)?.deallocate()
            ring.deallocate()
        }
    }

    // MARK: producers

    /// The ring, allocating it on first use with `Items` recorded as the item type.
    @inlinable @inline(__always)
    final func ring<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        let word = ringWord.load(ordering: .acquiring)
        // One test: a ring's address is even and nonzero, "no ring" is odd.
        if _fastPath(word & 1 == 0) { return RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped) }
        return allocateRing(recording: items)
    }

    /// The ring, allocating it with no item type recorded (tests that play a producer).
    @inlinable final var ring: RawRing { ring(recording: UntypedItems.self) }

    /// The lazy allocation of the first enqueue. A send cannot throw, so a failure traps
    /// naming the size; an owner that must survive it calls `reserveRing()` first.
    @usableFromInline @inline(never)
    final func allocateRing<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        do {
            return try installRing(itemType: items)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Allocates the ring now unless it exists, so no later enqueue allocates or can fail
    /// to. Any thread; idempotent. Throws, leaving the queue usable, when out of memory.
    package final func reserveRing() throws(RingAllocationError) {
        try reserveRing(recording: UntypedItems.self)
    }

    /// `reserveRing()` for a typed owner: records `items` as the item type.
    package final func reserveRing<Items: MPSCQueueItemType>(recording items: Items.Type) throws(RingAllocationError) {
        if ringBlock != nil { return }
        _ = try installRing(itemType: items)
    }

    /// Allocates a ring, records the item type and the taken count, and publishes it.
    /// Racing callers: one CAS wins, losers free theirs. Returns the ring installed.
    @inline(__always)
    private final func installRing(itemType: any MPSCQueueItemType.Type) throws(RingAllocationError) -> RawRing {
        var word = ringWord.load(ordering: .acquiring)
        if let block = MPSCQueue.block(word) { return RawRing(block: block) }
        let fresh = try RawRing(tryMailboxCapacity: capacity, slotBytes: slotBytes)
        // Written before the publishing CAS. An identity test, not a dynamic cast.
        fresh.itemType = ObjectIdentifier(itemType) == ObjectIdentifier(UntypedItems.self) ? nil : itemType
        while true {
            fresh.takenCount = Int(truncatingIfNeeded: word >> 1)  // the count goes on ("Giving the ring back")
            let (won, current) = ringWord.compareExchange(
                expected: word, desired: UInt(bitPattern: fresh.block),
                successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if won { return fresh }
            if let block = MPSCQueue.block(current) {
                fresh.deallocate()
                return RawRing(block: block)
            }
            word = current  // ring-less still: another count (a ring came and went)
        }
    }

    /// The overflow path's ring, under the overflow lock: the current one, or, if the one
    /// the producer loaded was given back, a fresh one with the old one's item type.
    final func currentRingUnderLock(replacing old: RawRing) -> RawRing {
        if let block = ringBlock { return RawRing(block: block) }
        do {
            return try installRing(itemType: old.itemType ?? UntypedItems.self)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Enqueues the `itemBytes` bytes at `source`, from any thread. A bitwise copy: on
    /// `.accepted` the queue owns the item and `source` is moved from; on `.closed` nothing
    /// was copied. Lock-free unless the ring is full; then one short critical section
    /// appends to the ordered overflow. Never fails for lack of space.
    @inlinable @inline(__always)
    package final func enqueue(moving source: UnsafeRawPointer) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: UntypedItems.self)
    }

    /// `enqueue(moving:)` for a typed owner: an enqueue that allocates the ring records
    /// `items` as the item type.
    @inlinable @inline(__always)
    package final func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: items)
    }

    /// `enqueue(moving:recording:)` with the item size known statically (must be this
    /// queue's).
    @inlinable @inline(__always)
    package final func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                   recording items: Items.Type) -> EnqueueResult {
        assert(itemBytes == self.itemBytes, "enqueue of \(itemBytes)-byte items into a queue of \(self.itemBytes)-byte items")
        if closed.load(ordering: .relaxed) { return .closed }
        // Off the pool, a reclaimable queue is reached inside a ring epoch section.
        if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes) { return result }
        return enqueueAllocatingRing(moving: source, itemBytes: itemBytes, recording: items)
    }

    /// `enqueueIfRing`, inside a ring epoch section when this thread is in none and the
    /// queue is reclaimable.
    @inlinable @inline(__always)
    final func enqueueIfRingInSectionIfNeeded(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        _slowPath(ckshim_epoch_depth() == 0) && reclaimable
            ? enqueueInSection(moving: source, itemBytes: itemBytes)
            : enqueueIfRing(moving: source, itemBytes: itemBytes)
    }

    /// The enqueue that found no ring: allocates one recording `Items`, then inserts. Out
    /// of line, so the item type's metadata is looked up only here.
    @inlinable @inline(never)
    final func enqueueAllocatingRing<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                          recording items: Items.Type) -> EnqueueResult {
        while true {
            _ = allocateRing(recording: items)
            // The ring may be given back again before the insert: then once more.
            if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes) { return result }
        }
    }

    /// `enqueueIfRing` inside a ring epoch section. Out of line: pool workers never come here.
    @usableFromInline @inline(never)
    final func enqueueInSection(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        ckshim_epoch_enter()
        defer { ckshim_epoch_exit() }
        return enqueueIfRing(moving: source, itemBytes: itemBytes)
    }

    /// The insert and the idle-flag claim; nil, with nothing done, when there is no ring.
    @inlinable @inline(__always)
    final func enqueueIfRing(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(self)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }
        return insert(moving: source, itemBytes: itemBytes, into: RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped))
    }

    /// The insert into `ring` or its overflow, then the idle-flag claim.
    @inlinable @inline(__always)
    final func insert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing) -> EnqueueResult {
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(self)
        #endif
        if !overflowActive.load(ordering: .acquiring), ringInsert(moving: source, itemBytes: itemBytes, into: ring) {
            ckshim_fence_atomic_load()  // the ticket CAS before the flag load (free on x86)
        } else if !enqueueOverflow(source: source, ring: ring, itemBytes: itemBytes) {
            // The append that set overflowActive (or used the ring): its Dekker fence. One
            // behind an active overflow needs none (MailboxQueue, "Overflow appends").
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
        return .accepted(becameNonEmpty: claimConsumer())
    }

    /// True when a send from this thread must enter a ring epoch section first: the thread
    /// is in none and the queue is reclaimable.
    @inlinable package final var sendNeedsSection: Bool { _slowPath(ckshim_epoch_depth() == 0) && reclaimable }

    /// The ring path of `enqueue(moving:itemBytes:recording:)` alone: `becameNonEmpty`, or
    /// nil with nothing copied (closed, no ring, ring full, overflow lock busy), and the
    /// caller makes the full enqueue. The caller is in a ring epoch section unless
    /// `sendNeedsSection` is false. `signallingUnit`: the caller knows `signalsUnit` is set.
    @inlinable @inline(__always)
    package final func enqueueOnRing(moving source: UnsafeRawPointer, itemBytes: Int, signallingUnit: Bool = false) -> Bool? {
        assert(!signallingUnit || signalsUnit, "enqueueOnRing(signallingUnit: true) on a queue that keeps its idle flag")
        assert(!sendNeedsSection, "enqueueOnRing outside a ring epoch section on a reclaimable queue")
        if closed.load(ordering: .relaxed) { return nil }
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(self)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }  // no ring yet, or given back
        let ring = RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped)
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(self)
        #endif
        if overflowActive.load(ordering: .acquiring) {
            // enqueueOverflow's inline case, with the lock taken only if it is free at once.
            guard overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return nil }
            let appended = appendBehindActiveOverflow(source: source, ring: ring, itemBytes: itemBytes)
            overflowLock.store(false, ordering: .releasing)
            // Behind an active overflow: no fence (MailboxQueue, "Overflow appends").
            return appended ? claimConsumer(signallingUnit: signallingUnit) : nil
        }
        guard ringInsert(moving: source, itemBytes: itemBytes, into: ring) else { return nil }
        ckshim_fence_atomic_load()  // the ticket CAS before the flag load (free on x86)
        return claimConsumer(signallingUnit: signallingUnit)
    }

    /// The ring half of every insert: claims a slot, copies the item in and publishes it
    /// (ckshim.h, "Ready marks"). False, with nothing copied, when the ring is full or
    /// sealed. The caller owes the fence before its idle-flag load.
    @inlinable @inline(__always)
    final func ringInsert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing) -> Bool {
        var ticket: UInt32 = 0
        guard let slot = ring.reserveMultiProducer(slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes), ticket: &ticket) else {
            return false
        }
        MPSCQueue.copyItem(to: slot, from: source, byteCount: itemBytes)
        #if DEBUG
        MPSCQueueTestHook.publishIfArmed(self)
        #endif
        ring.publishMultiProducer(slot: slot, ticket: ticket)
        return true
    }

    /// The full-ring path, with its common case inline: an active overflow whose tail chunk
    /// has room. True for that case: the caller owes no fence before its flag load
    /// (MailboxQueue, "Overflow appends"). Everything else is `enqueueSlow`, and false.
    @inlinable @inline(__always)
    final func enqueueOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
        lockOverflow()
        if appendBehindActiveOverflow(source: source, ring: ring, itemBytes: itemBytes) {
            overflowLock.store(false, ordering: .releasing)
            return true
        }
        enqueueSlow(source: source, ring: ring)
        return false
    }

    /// Under the overflow lock: appends behind an active overflow whose tail has room.
    @inlinable @inline(__always)
    final func appendBehindActiveOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
        guard overflowActive.load(ordering: .relaxed), let list = overflowList(ring), let tailBase = list.tail else { return false }
        let tail = OverflowChunk(tailBase)
        let index = tail.count
        guard index < tail.capacity else { return false }
        MPSCQueue.copyItem(to: tail.slot(index, slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes)), from: source, byteCount: itemBytes)
        tail.count = index + 1
        list.appendCount = list.appendCount &+ 1
        return true
    }

    /// Enqueues `word` (a word queue's item) from any thread; see `enqueue(moving:)`.
    @inlinable @inline(__always)
    package final func enqueue(word: UInt) -> EnqueueResult {
        assert(itemBytes == 8, "enqueue(word:) on a queue of \(itemBytes)-byte items")
        var word = word
        return enqueue(moving: &word)
    }

    /// Copies an item into a slot: whole words for multiples of 8 up to 32 bytes. Other
    /// sizes up to 32 add one word ending at the item's last byte (overlapping, never
    /// outside the item); below 8 bytes, two overlapping pieces; memmove above 32.
    @inlinable @inline(__always)
    static func copyItem(to destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, byteCount: Int) {
        @inline(__always) func piece<T: FixedWidthInteger>(_ offset: Int, _: T.Type) {
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: offset, as: T.self),
                                   toByteOffset: offset, as: T.self)
        }
        @inline(__always) func word(_ offset: Int) { piece(offset, UInt64.self) }
        switch byteCount {
        case 8: word(0)
        case 16: word(0); word(8)
        case 24: word(0); word(8); word(16)
        case 32: word(0); word(8); word(16); word(24)
        case 9...15: word(0); word(byteCount - 8)
        case 17...23: word(0); word(8); word(byteCount - 8)
        case 25...31: word(0); word(8); word(16); word(byteCount - 8)
        case 4...7: piece(0, UInt32.self); piece(byteCount - 4, UInt32.self)
        case 2...3: piece(0, UInt16.self); piece(byteCount - 2, UInt16.self)
        case 1: piece(0, UInt8.self)
        default: destination.copyMemory(from: source, byteCount: byteCount)
        }
    }

    /// The producer side of the idle flag: true for the one caller that took it from idle.
    /// A queue that signals its unit: true when the unit is not due, by one plain load.
    @inlinable @inline(__always)
    final func claimConsumer(signallingUnit: Bool = false) -> Bool {
        if signallingUnit || signalsUnit { return !isDue }
        return consumerIdle.load(ordering: .relaxed)
            && consumerIdle.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
    }

    /// For an owner whose producers wait outside the queue (a bounded mailbox): after the
    /// waiter is recorded, makes sure a turn follows. True: schedule the consumer. The
    /// fence is the producer's half of the Dekker pair, the waiter in place of an item.
    package final func claimConsumerForWaiter() -> Bool {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return claimConsumer()
    }

    /// Ring-only enqueue: refuses instead of overflowing. Returns nil, with nothing copied,
    /// when the ring is full or the overflow is in use. A sealed ring also reads as full,
    /// so an owner that takes nil for "full" (a bounded mailbox) is not reclaimable.
    @inlinable @inline(__always)
    package final func tryEnqueue(moving source: UnsafeRawPointer) -> EnqueueResult? {
        tryEnqueue(moving: source, recording: UntypedItems.self)
    }

    /// `tryEnqueue(moving:)` for a typed owner (see `enqueue(moving:recording:)`).
    @inlinable @inline(__always)
    package final func tryEnqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult? {
        if closed.load(ordering: .relaxed) { return .closed }
        // Off the pool, a reclaimable queue is reached inside a ring epoch section.
        let entered = _slowPath(ckshim_epoch_depth() == 0) && reclaimable
        if entered { ckshim_epoch_enter() }
        defer { if entered { ckshim_epoch_exit() } }
        return tryEnqueueInsert(moving: source, recording: items)
    }

    /// The insert of `tryEnqueue`: the ring only (see `insert`).
    @inlinable @inline(__always)
    final func tryEnqueueInsert<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult? {
        let ring = self.ring(recording: items)
        guard !overflowActive.load(ordering: .acquiring),
              ringInsert(moving: source, itemBytes: itemBytes, into: ring) else { return nil }
        ckshim_fence_atomic_load()
        return .accepted(becameNonEmpty: claimConsumer())
    }

    /// The full-ring path ("Ring, then overflow"), entered with the overflow lock held,
    /// which it gives back: the ring once more if no overflow is active, else an append
    /// into the tail chunk (a new chunk when the tail is full).
    @usableFromInline @inline(never)
    final func enqueueSlow(source: UnsafeRawPointer, ring loaded: RawRing) {
        defer { overflowLock.store(false, ordering: .releasing) }
        // The loaded ring may have been given back; the lock orders this load after the
        // detach ("Giving the ring back").
        let ring = reclaimable ? currentRingUnderLock(replacing: loaded) : loaded
        if !overflowActive.load(ordering: .relaxed), ringInsert(moving: source, itemBytes: itemBytes, into: ring) { return }
        let list = overflowList(ring) ?? makeOverflowList(ring)
        overflowActive.store(true, ordering: .releasing)
        var chunk = list.tail.map(OverflowChunk.init)
        if chunk == nil || chunk!.count == chunk!.capacity { chunk = appendOverflowChunk(to: list, after: chunk) }
        let tail = chunk.unsafelyUnwrapped
        let index = tail.count
        MPSCQueue.copyItem(to: tail.slot(index, slotBytes: slotBytes), from: source, byteCount: itemBytes)
        tail.count = index + 1
        list.appendCount = list.appendCount &+ 1
    }

    /// The first overflow append's list, published before `overflowActive` is set.
    @inline(never)
    final func makeOverflowList(_ ring: RawRing) -> OverflowList {
        let list = OverflowList.allocate()
        ring.overflowListBase = list.base
        return list
    }

    /// A new tail chunk (twice the last one's size, up to the maximum). Under overflowLock.
    @inline(never)
    final func appendOverflowChunk(to list: OverflowList, after tail: OverflowChunk?) -> OverflowChunk {
        let capacity = tail.map { Swift.min($0.capacity * 2, OverflowChunk.maximumCapacity) } ?? OverflowChunk.firstCapacity
        let fresh = OverflowChunk.allocate(capacity: capacity, slotBytes: slotBytes)
        if let tail { tail.next = fresh.base } else { list.head = fresh.base }
        list.tail = fresh.base
        return fresh
    }

    /// Pointer convenience for `enqueue(word:)`.
    @inlinable @inline(__always)
    package final func enqueue(_ pointer: UnsafeMutableRawPointer) -> EnqueueResult {
        enqueue(word: UInt(bitPattern: pointer))
    }

    // MARK: consumer

    /// Hands up to `max` items, FIFO per producer, to `body`; `take` moves each out of its
    /// slot first. Consumer only, never from inside `body`. No atomic read-modify-write
    /// per item; the idle protocol runs when the queue is dry.
    @inlinable @inline(__always)
    package final func drain<Item>(max: Int, lingering: Bool = false, taking take: (UnsafeMutableRawPointer) -> Item,
                             _ body: (Item) -> Void) -> DrainOutcome {
        drain(max: max, lingering: lingering, itemBytes: itemBytes, taking: take, body)
    }

    /// `drain(max:lingering:taking:_:)` for a caller that knows the item size statically.
    /// `itemBytes` must be this queue's. `signallingUnit`: the caller knows `signalsUnit`
    /// is set, so going idle is `runDry` without a test.
    @inlinable @inline(__always)
    package final func drain<Item>(max: Int, lingering: Bool = false, itemBytes: Int, signallingUnit: Bool = false,
                             taking take: (UnsafeMutableRawPointer) -> Item, _ body: (Item) -> Void) -> DrainOutcome {
        assert(itemBytes == self.itemBytes, "drain of \(itemBytes)-byte items from a queue of \(self.itemBytes)-byte items")
        assert(!signallingUnit || signalsUnit, "drain(signallingUnit: true) of a queue that keeps its idle flag")
        let slotBytes = MPSCQueue.slotBytes(forItemBytes: itemBytes)
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return signallingUnit ? runDry(nil) : goIdle(nil) }
        let ring = RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped)
        var taken = 0
        while taken < max {
            // Pending overflow items first: every ring item still waiting was claimed
            // after they were taken ("Ring, then overflow").
            if let list = overflowList(ring), _slowPath(list.pendingChunk != nil) {
                handOutPending(list, OverflowChunk(list.pendingChunk.unsafelyUnwrapped), ring: ring, taken: &taken,
                               max: max, slotBytes: slotBytes, take, body)
                continue
            }
            // Then the ring. The pending chain stays empty until this drain's own
            // takeOverflowIfQuiescent fills it, so it is not looked at per item.
            var head = ring.consumerHeadSingleConsumer  // this consumer's own index
            var next = ring.peekSingleConsumer(at: head, slotBytes: slotBytes)
            while let slot = next {
                let item = take(slot)
                head &+= 1
                ring.releaseSingleConsumer(to: head)
                // Counted before the hand-off, so a turn stuck in `body` counts its item.
                ring.takenCount = ring.takenCount &+ 1
                body(item)
                taken &+= 1  // ≤ max
                if taken == max { return .more }
                next = ring.peekNextSingleConsumer(at: head, slotBytes: slotBytes)
            }
            if overflowActive.load(ordering: .acquiring), takeOverflowIfQuiescent(ring) {
                continue
            } else if lingering, taken > 0, let worker = ckshim_linger_get(), WorkerShared.nextSlotIsEmpty(worker),
                      lingerForMore(ring) {
                continue  // something arrived while the drain lingered
            } else {
                return signallingUnit ? runDry(ring) : goIdle(ring)
            }
        }
        return .more
    }

    /// Most empty looks a lingering drain makes, a `pause` apart, before it goes idle.
    @usableFromInline static let lingerPolls = 64

    /// The lingering looks: true when something arrived while this worker had nothing
    /// else to run. Consumer only, on a thread where ckshim_linger_get() is set.
    @usableFromInline @inline(never)
    final func lingerForMore(_ ring: RawRing) -> Bool {
        // An active overflow here is one the drain could not take (a producer is between
        // claim and publish); lingering would spin on it. goIdle's bounded wait handles it.
        guard !overflowActive.load(ordering: .acquiring), Worker.currentHasNothingElseToRun() else { return false }
        for _ in 0..<MPSCQueue.lingerPolls {
            #if DEBUG
            MPSCQueueTestHook.lingerIfArmed(self)
            #endif
            ckshim_stall()
            if ring.headIsReadySingleConsumer(slotBytes: slotBytes)
                || overflowActive.load(ordering: .acquiring) {
                return true
            }
        }
        return false
    }

    /// Hands out a run of the first pending chunk's items from `pendingIndex`: the rest
    /// of the chunk, or `max − taken` if fewer. A taken chunk's count is final, so the run
    /// is known at its start, and `pendingIndex` moves past it then (drains do not nest).
    @inlinable @inline(__always)
    final func handOutPending<Item>(_ list: OverflowList, _ chunk: OverflowChunk, ring: RawRing, taken: inout Int,
                              max: Int, slotBytes: Int, _ take: (UnsafeMutableRawPointer) -> Item,
                              _ body: (Item) -> Void) {
        let index = list.pendingIndex
        let run = Swift.min(chunk.count &- index, max &- taken)  // ≥ 1: freed with its last item
        list.pendingIndex = index &+ run
        var slot = chunk.slot(index, slotBytes: slotBytes)
        let end = taken &+ run  // ≤ max
        repeat {
            let item = take(slot)
            slot += slotBytes
            // The list from the ring again: nothing of it is kept across `body`.
            let list = overflowList(ring).unsafelyUnwrapped
            list.handedOut = list.handedOut &+ 1
            ring.takenCount = ring.takenCount &+ 1  // before the hand-off (see drain)
            body(item)
            taken &+= 1
        } while taken != end
        endPendingRun(ring)
    }

    /// After a run: frees the first pending chunk if its last item is out. Consumer only.
    @usableFromInline @inline(never)
    final func endPendingRun(_ ring: RawRing) {
        let list = overflowList(ring).unsafelyUnwrapped
        let chunk = OverflowChunk(list.pendingChunk.unsafelyUnwrapped)
        if list.pendingIndex == chunk.count { releasePendingChunk(list, chunk) }
    }

    /// Word form of `drain(max:taking:_:)` (a queue of 8-byte items).
    @inlinable
    package final func drain(max: Int, _ body: (UInt) -> Void) -> DrainOutcome {
        drain(max: max, taking: { $0.load(as: UInt.self) }, body)
    }

    /// A pending chunk is used up: frees it (OverflowChunk.deallocate) and goes on with
    /// the next. Consumer only.
    @usableFromInline @inline(never)
    final func releasePendingChunk(_ list: OverflowList, _ chunk: OverflowChunk) {
        list.pendingChunk = chunk.next
        list.pendingIndex = 0
        chunk.deallocate()
    }

    /// The consumer side of the idle flag, once `drain` found nothing: store idle, fence,
    /// look again at the producers' side (a claimed slot, an active overflow).
    @inlinable @inline(__always)
    final func goIdle(_ ring: RawRing?) -> DrainOutcome {
        assert(ring.flatMap(overflowList)?.pendingChunk == nil, "goIdle with overflow items pending")
        if signalsUnit { return runDry(ring) }
        consumerIdle.store(true, ordering: .sequentiallyConsistent)
        #if !arch(x86_64)
        // The store→load barrier before the p_head load: `dmb ish` on AArch64. On x86-64
        // the seq_cst store (xchg) already is one.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        #endif
        if let ring {
            if ring.isQuiescent && !overflowActive.load(ordering: .sequentiallyConsistent) { return .empty }
            return keepTurn(ring)
        }
        // No ring when the drain looked: look again after the fence, for one a producer
        // installed since. The install stands in for the claim in the Dekker pair.
        guard let block = ringBlock else { return .empty }
        return keepTurn(RawRing(block: block))
    }

    /// goIdle of a queue that signals its unit: `.empty` when nothing is claimed; else the
    /// turn waits for the publish and returns `.more` ("The unit as the idle flag").
    @inlinable @inline(__always)
    final func runDry(_ ring: RawRing?) -> DrainOutcome {
        guard let ring else { return .empty }
        if ring.isQuiescent { return .empty }
        return keepUnitTurn(ring)
    }

    /// runDry found a claimed slot: waits for its publish and keeps the turn. Consumer only.
    @usableFromInline @inline(never)
    final func keepUnitTurn(_ ring: RawRing) -> DrainOutcome {
        if !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// goIdle found work arriving: keeps the turn unless a producer took the flag, and
    /// waits for a claimed slot's publish. Consumer only.
    @usableFromInline @inline(never)
    final func keepTurn(_ ring: RawRing?) -> DrainOutcome {
        guard consumerIdle.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
        else { return .empty }
        if let ring, !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// Most looks `waitForCommit` makes, a `pause` apart, before it yields the CPU once.
    @usableFromInline static let commitPolls = 64

    /// Waits briefly for a claimed slot's publish; then, if this worker has nothing else
    /// to run, yields the CPU once for a preempted producer. Consumer only.
    @usableFromInline @inline(never)
    final func waitForCommit(_ ring: RawRing) {
        for _ in 0..<MPSCQueue.commitPolls {
            #if DEBUG
            MPSCQueueTestHook.commitWaitIfArmed(self)
            #endif
            if ring.headIsReadySingleConsumer(slotBytes: slotBytes) { return }
            ckshim_stall()
        }
        if Worker.currentHasNothingElseToRun() { sched_yield() }
    }

    /// Pointer convenience for `drain(max:_:)` (every word must have been a pointer).
    @inlinable
    package final func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> DrainOutcome {
        drain(max: max) { (word: UInt) in body(UnsafeMutableRawPointer(bitPattern: word)!) }
    }

    /// Moves the overflow list into `pending` if the ring is quiescent. Consumer only.
    @usableFromInline @inline(never)
    final func takeOverflowIfQuiescent(_ ring: RawRing) -> Bool {
        guard overflowActive.load(ordering: .acquiring) else { return false }
        return withOverflowLock {
            guard ring.isQuiescent, let list = overflowList(ring), let head = list.head else { return false }
            // A chain is taken only once the previous one is used up.
            assert(list.pendingChunk == nil)
            list.pendingChunk = head
            list.pendingIndex = 0
            list.head = nil
            list.tail = nil
            overflowActive.store(false, ordering: .releasing)
            return true
        }
    }

    // MARK: giving the ring back

    /// Gives an idle reclaimable queue's ring back: seal, detach, retire to the ring epoch
    /// ("Giving the ring back"). False, with nothing changed, when a producer came first.
    /// Consumer only, right after a drain that returned `.empty`.
    @discardableResult
    package final func releaseIdleRing() -> Bool {
        var dropped = 0
        return releaseIdleRing(overflowAppends: &dropped)
    }

    /// `releaseIdleRing()`, adding to `dropped` the overflow sends the list given back
    /// counted (`overflowAppends` starts again from 0), so an owner keeps exact totals.
    package final func releaseIdleRing(overflowAppends dropped: inout Int) -> Bool {
        guard reclaimable, let block = ringBlock else { return false }
        let ring = RawRing(block: block)
        guard !overflowActive.load(ordering: .acquiring), overflowList(ring)?.pendingChunk == nil else { return false }
        #if DEBUG
        if MPSCQueueTestHook.skipSeal.load(ordering: .relaxed) {
            guard ring.isQuiescent else { return false }
        } else {
            guard ring.seal() else { return false }
        }
        #else
        guard ring.seal() else { return false }  // a producer claimed: its item is coming
        #endif
        let detached = withOverflowLock { () -> Bool in
            // A producer that met the sealed ring and overflowed onto it got here first.
            guard !overflowActive.load(ordering: .relaxed) else { return false }
            ringWord.store(UInt(truncatingIfNeeded: ring.takenCount) << 1 | 1, ordering: .releasing)
            return true
        }
        guard detached else {
            ring.unseal()
            return false
        }
        if let list = overflowList(ring) { dropped += list.appendCount }
        ckshim_ring_retire(ring.ring)  // frees the list too (ckshim.h)
        return true
    }

    /// For the owner's walker: true when the queue has a ring and took no item since the
    /// previous call. One walker at a time; any thread.
    package final func ringIdleSinceLastLook() -> Bool {
        readingRing { ring, _ in
            guard let ring else { return false }
            let seen = UInt64(truncatingIfNeeded: ring.takenCount) &+ 1  // 0: never looked
            let word = ckshim_ring_walker_word(ring.ring)
            let previous = ckshim_load_u64_relaxed(word)
            ckshim_store_u64_relaxed(word, seen)
            return previous == seen
        }
    }

    /// True while the queue holds a ring (a snapshot). Any thread.
    package final var hasRing: Bool { ringBlock != nil }

    /// Closes the queue: later enqueues are refused with `.closed`. Any thread; idempotent.
    /// Returns true for the call that closed it.
    @discardableResult @usableFromInline
    package final func markClosed() -> Bool {
        !closed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// True once `markClosed()` ran.
    @usableFromInline package final var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Items counted and not yet drained (a snapshot).
    @usableFromInline package final var approximateCount: Int {
        readingRing { ring, _ in
            guard let ring else { return 0 }
            guard let list = overflowList(ring) else { return ring.claimedCount }
            // Handed-out first: both only grow, so the difference never goes below zero.
            let handedOut = list.handedOut
            return ring.claimedCount + Swift.max(list.appendCount - handedOut, 0)
        }
    }

    /// True while a consumer turn is running or due (for a queue that signals its unit:
    /// the unit is not idle). A consumer that sees false has nothing to drain.
    @inlinable package final var hasPendingWork: Bool {
        if signalsUnit { return stateSnapshot != ScheduledUnit.idle }
        return flagSaysPending
    }

    /// `hasPendingWork` of a queue known to keep its idle flag: the flag alone.
    @inlinable package final var flagSaysPending: Bool {
        assert(!signalsUnit, "flagSaysPending on a queue that signals its unit")
        return !consumerIdle.load(ordering: .acquiring)
    }

    /// How many enqueues ever took the overflow path (0 means every send stayed lock-free).
    package final var overflowAppends: Int {
        readingRing { ring, _ in ring.flatMap { overflowList($0)?.appendCount } ?? 0 }
    }

    /// Runs `body` holding the overflow spin lock.
    @usableFromInline
    final func withOverflowLock<R>(_ body: () -> R) -> R {
        lockOverflow()
        defer { overflowLock.store(false, ordering: .releasing) }
        return body()
    }

    /// Takes the overflow spin lock (given back by a releasing store of false).
    @inlinable @inline(__always)
    final func lockOverflow() {
        if !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            lockOverflowContended()
        }
    }

    /// Test-and-test-and-set with exponential back-off; yields the CPU now and then, for a
    /// preempted holder.
    @usableFromInline @inline(never)
    final func lockOverflowContended() {
        var spins = 0
        var pause = 1
        repeat {
            while overflowLock.load(ordering: .relaxed) {
                for _ in 0..<pause { ckshim_stall() }
                pause = Swift.min(pause * 2, 64)
                spins += 1
                if spins >= 256 { sched_yield(); spins = 0 }
            }
        } while !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    /// Overflow chunks held (taken and not yet used up, or still being appended to): 0 once
    /// a burst has drained. Consumer only (for tests).
    package final var overflowChunksHeld: Int {
        guard let block = ringBlock, let list = overflowList(RawRing(block: block)) else {
            return 0
        }
        return OverflowList.chunks(from: list.pendingChunk) + withOverflowLock { OverflowList.chunks(from: list.head) }
    }

    /// Bytes the ring occupies once allocated (0 before the first enqueue).
    package final var ringBytes: Int {
        ringBlock == nil ? 0 : RawRing.mailboxAllocationSize(capacity: capacity, slotBytes: slotBytes)
    }
}

extension RawRing {
    /// The item type a typed owner recorded; nil for an untyped queue. Written once, into
    /// the fresh block before the CAS that publishes it; read by the queue's deinit.
    var itemType: (any MPSCQueueItemType.Type)? {
        get { UnsafeRawPointer(ckshim_ring_item_type_slot(ring)).load(as: (any MPSCQueueItemType.Type)?.self) }
        nonmutating set {
            UnsafeMutableRawPointer(ckshim_ring_item_type_slot(ring)).storeBytes(of: newValue, as: (any MPSCQueueItemType.Type)?.self)
        }
    }
}

#if DEBUG
/// Debug builds only: points where a test runs an action once, on one queue, to replay a
/// race exactly. One relaxed load per pass when disarmed.
@usableFromInline package enum MPSCQueueTestHook {
    @usableFromInline static let enqueue = QueueHookPoint()
    @usableFromInline static let linger = QueueHookPoint()
    @usableFromInline static let commitWait = QueueHookPoint()
    @usableFromInline static let claim = QueueHookPoint()
    @usableFromInline static let publish = QueueHookPoint()
    /// Makes `releaseIdleRing` skip its seal (checking quiescence instead): only for a
    /// test that shows the seal is needed.
    package static let skipSeal = Atomic<Bool>(false)

    /// The next enqueue on `queue` (from any thread) runs `action` after it loaded the
    /// ring and before it claims a slot; then the hook disarms itself.
    package static func armClaim(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        claim.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func claimIfArmed(_ queue: MPSCQueue) { claim.fireIfArmed(queue) }

    /// The next ring enqueue on `queue` runs `action` after it claimed its slot and wrote
    /// the item, before it publishes (a producer preempted at the worst moment); then the
    /// hook disarms itself. One made under the overflow lock holds that lock meanwhile.
    package static func armPublish(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        publish.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func publishIfArmed(_ queue: MPSCQueue) { publish.fireIfArmed(queue) }

    /// The next enqueue on `queue` (from any thread) runs `action` after its closed check
    /// and before inserting; then the hook disarms itself.
    package static func arm(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        enqueue.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func pauseIfArmed(_ queue: MPSCQueue) { enqueue.fireIfArmed(queue) }

    /// The next lingering look of a drain of `queue` runs `action` (on the consumer's
    /// thread, before its pause); then the hook disarms itself.
    package static func armLinger(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        linger.arm(queue, action)
    }

    /// Disarms `armLinger` if it has not fired.
    package static func disarmLinger() { linger.disarm() }

    @inlinable @inline(__always)
    package static func lingerIfArmed(_ queue: MPSCQueue) { linger.fireIfArmed(queue) }

    /// The next look of a drain of `queue` waiting for a producer's publish runs `action`
    /// on the consumer's thread before it looks; then the hook disarms itself.
    package static func armCommitWait(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        commitWait.arm(queue, action)
    }

    /// Disarms `armCommitWait` if it has not fired.
    package static func disarmCommitWait() { commitWait.disarm() }

    @inlinable @inline(__always)
    package static func commitWaitIfArmed(_ queue: MPSCQueue) { commitWait.fireIfArmed(queue) }
}

/// Debug builds only: one one-shot hook point. The first pass on the armed queue disarms
/// it (a CAS: one thread wins) and runs the action.
@usableFromInline package final class QueueHookPoint: Sendable {
    /// The armed queue's identity, 0 when disarmed.
    @usableFromInline let target = Atomic<UInt>(0)
    private let action = Lock<(@Sendable () -> Void)?>(nil)

    init() {}

    func arm(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
        target.store(UInt(bitPattern: ObjectIdentifier(queue).hashValue), ordering: .releasing)
    }

    func disarm() {
        target.store(0, ordering: .releasing)
        action.withLock { $0 = nil }
    }

    @inlinable @inline(__always)
    func fireIfArmed(_ queue: MPSCQueue) {
        let armed = target.load(ordering: .relaxed)
        if armed != 0, armed == UInt(bitPattern: ObjectIdentifier(queue).hashValue) { fire(armed) }
    }

    @usableFromInline func fire(_ armed: UInt) {
        guard target.compareExchange(expected: armed, desired: 0, ordering: .acquiringAndReleasing).exchanged,
              let action = action.withLock({ body -> (@Sendable () -> Void)? in defer { body = nil }; return body })
        else { return }
        action()
    }
}
#endif
