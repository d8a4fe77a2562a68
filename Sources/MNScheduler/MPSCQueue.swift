// MPSCQueue: the multi-producer, single-consumer queue under every FastMailbox mailbox and
// every MNSerialExecutor. One ck_ring plus an ordered overflow list; items of `itemBytes`.
//
// Invariants (argued for x86-64 and AArch64 in MNScheduler.docc/MailboxQueue.md; checked
// by Models/mailbox.pml, unit_mailbox.pml and ring_reclaim.pml; slot ordering: ckshim.h,
// "Ready marks"):
//   (S1) idle flag busy  ⇔  exactly one consumer turn is running or due.
//   (S2) Every inserted item is drained by a consumer turn that starts after it.
//   (S3) Exactly one becameNonEmpty per idle → busy transition.
//   (FIFO) Items from one producer are handed out in order, across ring and overflow.
//   (NOWAIT) No producer waits for another; a preempted one delays only the consumer.
// With `signalsUnit` the owning unit's state word replaces the idle flag: S1–S3 become
// UnitHeader's R1–R3, and the flag's byte may hold a first slot ("The first slot"). The
// producer's insert-fence-look and the consumer's store-fence-look are a Dekker pair
// ("Who runs the consumer").

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
/// A value its owner stores inline (an actor cell, an executor, ``MPSCQueueBox``): the queue
/// allocates nothing until its first ring. Its address is its identity, so an owner keeps
/// it in a `let` and never moves it.
@frozen @usableFromInline
package struct MPSCQueue: ~Copyable, Sendable {
    /// What an enqueue did.
    @usableFromInline package enum EnqueueResult: Equatable, Sendable {
        /// Accepted; `becameNonEmpty`: the queue left idle (S3): the caller starts the consumer.
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

    // Thirty-two bytes, no padding ("Where the fields live"): the ring word, one byte each,
    // then the first slot's two words.

    /// The ring block's address (even), or, when odd, no ring and the taken count in
    /// `word >> 1`. Only the consumer takes a ring away, under the overflow lock.
    @usableFromInline let ringWord = Atomic<UInt>(1)

    /// Without `signalsUnit`: the idle flag, `FirstSlot.idle` when no consumer turn is running
    /// or due (S1), else `FirstSlot.busy`. With it, the unit's state word is the idle flag and
    /// this byte holds the first slot's state ("The first slot").
    @usableFromInline let idleOrFirstSlot: Atomic<UInt8>

    /// Set once by markClosed; producers read it before inserting.
    @usableFromInline let closed = Atomic<Bool>(false)

    /// Set by an overflow append, cleared when the consumer takes the list; under overflowLock.
    @usableFromInline let overflowActive = Atomic<Bool>(false)

    /// The overflow spin lock, held only for an append or a swap of the list.
    @usableFromInline let overflowLock = Atomic<Bool>(false)

    /// Set once the consumer grew the ring ("Growing the ring"); every later ring is full-size.
    @usableFromInline let ringGrown = Atomic<Bool>(false)

    /// `Shape.reclaimableBit` and `Shape.signalsUnitBit`.
    @usableFromInline let options: UInt8
    /// log2 of the full-size ring's slots.
    @usableFromInline let capacityShift: UInt8
    /// Bytes of one item (at most RawRing.maximumSlotBytes).
    @usableFromInline let itemBytes8: UInt8

    /// The first slot's item ("The first slot"), as raw storage at `firstItemAddress`:
    /// written in place by the producer that claimed the slot, before its release store of
    /// `published`; moved out in place by the consumer after its acquire load of it. Never
    /// written again once claimed. (Atomics only for their stable, writable storage.)
    @usableFromInline let firstItemLow = Atomic<UInt64>(0)
    @usableFromInline let firstItemHigh = Atomic<UInt64>(0)

    /// The values of `idleOrFirstSlot`. The idle flag's two values are never a first slot's
    /// state that asks the consumer for anything, so a drain tests the byte without the shape.
    @usableFromInline enum FirstSlot {
        /// The idle flag: a consumer turn is running or due.
        @inlinable static var busy: UInt8 { 0 }
        /// The idle flag: no consumer turn is running or due.
        @inlinable static var idle: UInt8 { 1 }
        /// A producer claimed the slot and has not published its item yet.
        @inlinable static var claimed: UInt8 { 2 }
        /// The slot holds an item for the consumer.
        @inlinable static var published: UInt8 { 3 }
        /// Nobody has claimed the slot yet.
        @inlinable static var free: UInt8 { 4 }
        /// The consumer took the slot's item; the slot is never used again.
        @inlinable static var spent: UInt8 { 5 }
        /// True for `claimed` and `published`: the slot is the queue's head.
        @inlinable @inline(__always) static func isHead(_ state: UInt8) -> Bool { state & ~1 == claimed }
        /// True for `free`, `claimed` and `published`: a drain must look at the slot.
        @inlinable @inline(__always) static func isLive(_ state: UInt8) -> Bool { state &- claimed < 3 }
    }

    /// The queue has a first slot ("The first slot"): it signals its unit, its ring is made
    /// lazily, and its items fit.
    @inlinable package var hasFirstSlot: Bool { signalsUnit && reclaimable && itemBytes <= Shape.firstSlotBytes }

    /// True while a drain must look at the first slot (free, claimed or published); once
    /// false, false for good. One byte load; consumer only.
    @inlinable @inline(__always)
    package var firstSlotIsLive: Bool { FirstSlot.isLive(idleOrFirstSlot.load(ordering: .relaxed)) }

    /// Whether the consumer may give the ring back ("Giving the ring back").
    @inlinable package var reclaimable: Bool { options & Shape.reclaimableBit != 0 }

    /// The unit's state word stands in for `consumerIdle` ("The unit as the idle flag").
    @inlinable package var signalsUnit: Bool { options & Shape.signalsUnitBit != 0 }

    /// The ring block of `word`, nil when it holds none (odd).
    @inlinable @inline(__always)
    static func block(_ word: UInt) -> UnsafeMutableRawPointer? {
        word & 1 == 0 ? UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped : nil
    }

    /// The current ring block, nil when none. Reclaimable: dereference only in a ring epoch
    /// section, or as the consumer.
    @inlinable package var ringBlock: UnsafeMutableRawPointer? { MPSCQueue.block(ringWord.load(ordering: .acquiring)) }

    /// Ring slots of a full-size ring.
    @inlinable package var capacity: Int { 1 << Int(capacityShift) }
    /// Slots of a reclaimable queue's first ring, before any burst ("Growing the ring").
    @inlinable package static var firstRingCapacity: Int { 4 }
    /// Slots of the next ring to install: a small first ring until the queue has grown.
    @inlinable var nextRingCapacity: Int {
        reclaimable && !ringGrown.load(ordering: .relaxed) ? Swift.min(capacity, MPSCQueue.firstRingCapacity) : capacity
    }
    /// Bytes of one item: 8 for a word queue.
    @inlinable package var itemBytes: Int { Int(itemBytes8) }
    /// Bytes of one ring slot: itemBytes rounded up to a multiple of 8.
    @inlinable package var slotBytes: Int { MPSCQueue.slotBytes(forItemBytes: itemBytes) }
    /// A slot's bytes for items of `itemBytes`.
    @inlinable static func slotBytes(forItemBytes itemBytes: Int) -> Int { (itemBytes + 7) & ~7 }

    /// Items the consumer has taken out so far; any thread.
    package var dequeuedCount: Int {
        let first = idleOrFirstSlot.load(ordering: .relaxed) == FirstSlot.spent ? 1 : 0
        return first + readingRing { ring, word in ring?.takenCount ?? Int(truncatingIfNeeded: word >> 1) }
    }

    /// Runs `body` with the current ring (nil: none) and its word, in a ring epoch section
    /// when one is needed. Off the hot path.
    @inlinable
    func readingRing<R>(_ body: (RawRing?, UInt) -> R) -> R {
        let enter = reclaimable && ckshim_epoch_depth() == 0
        if enter { ckshim_epoch_enter() }
        defer { if enter { ckshim_epoch_exit() } }
        let word = ringWord.load(ordering: .acquiring)
        return body(MPSCQueue.block(word).map(RawRing.init(block:)), word)
    }

    /// The queue's address: which queue a test hook is armed on. An owner never moves it.
    @inlinable package var hookIdentity: UInt { withUnsafePointer(to: self) { UInt(bitPattern: $0) } }

    /// The overflow list, nil until the first overflow append.
    @inlinable func overflowList(_ ring: RawRing) -> OverflowList? { ring.overflowListBase.map(OverflowList.init) }

    /// Creates an empty queue. The ring is allocated on the first enqueue or by
    /// `reserveRing()`; `reclaimable`: the consumer may give it back while idle.
    package init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
        self.init(shape: try Shape(capacity: capacity, itemBytes: itemBytes, reclaimable: reclaimable))
    }

    /// Creates an empty queue of a validated shape.
    @inlinable
    package init(shape: Shape) {
        self.capacityShift = shape.capacityShift
        self.itemBytes8 = shape.itemBytes8
        self.options = (shape.reclaimable ? Shape.reclaimableBit : 0) | (shape.signalsUnit ? Shape.signalsUnitBit : 0)
        self.idleOrFirstSlot = Atomic(shape.firstSlot ? FirstSlot.free : FirstSlot.idle)
    }

    /// A queue's validated shape, made before the queue so that its owner can report a bad
    /// capacity before either exists.
    @usableFromInline package struct Shape: Sendable {
        @usableFromInline let capacityShift: UInt8
        @usableFromInline let itemBytes8: UInt8
        @usableFromInline let reclaimable: Bool
        /// The queue's owner is its consumer, scheduled as a unit; its state word is the idle flag.
        @usableFromInline package private(set) var signalsUnit = false

        /// Validates `capacity`; traps on a bad `itemBytes` (a programming error). Inlinable, so
        /// a constant shape is checked at compile time.
        @inlinable
        package init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
            try RawRing.validate(capacity: capacity)
            precondition(itemBytes >= 1 && itemBytes <= RawRing.maximumSlotBytes,
                         "MPSCQueue: items of \(itemBytes) bytes (1...\(RawRing.maximumSlotBytes))")
            capacityShift = UInt8(truncatingIfNeeded: capacity.trailingZeroBitCount)  // a power of two
            itemBytes8 = UInt8(truncatingIfNeeded: itemBytes)
            self.reclaimable = reclaimable
        }

        /// Slots of the ring once allocated.
        @inlinable package var capacity: Int { 1 << Int(capacityShift) }

        /// The queue's `options` bit for `reclaimable`.
        @inlinable static var reclaimableBit: UInt8 { 1 }
        /// The queue's `options` bit for `signalsUnit`.
        @inlinable static var signalsUnitBit: UInt8 { 2 }
        /// Largest item the first slot holds.
        @inlinable package static var firstSlotBytes: Int { 16 }

        /// The first item may travel in the queue's first slot instead of a ring: a queue
        /// that signals its unit, made lazily, of items that fit ("The first slot").
        @inlinable package var firstSlot: Bool { signalsUnit && reclaimable && Int(itemBytes8) <= Shape.firstSlotBytes }

        /// This shape for a queue whose owner is its consumer, scheduled as a unit. A
        /// reclaimable queue of items that fit then gets a first slot ("The first slot"):
        /// its owner destroys an item left there (`takeFirstSlotItem`).
        @inlinable package func signallingUnit() -> Shape {
            var shape = self
            shape.signalsUnit = true
            return shape
        }

        /// The smallest shape, for an owner that never uses its queue: no ring is allocated.
        package static var unused: Shape { Shape(capacityShift: 2, itemBytes8: 8, reclaimable: false) }

        private init(capacityShift: UInt8, itemBytes8: UInt8, reclaimable: Bool) {
            self.capacityShift = capacityShift
            self.itemBytes8 = itemBytes8
            self.reclaimable = reclaimable
        }
    }

    deinit {
        if let block = ringBlock {
            let ring = RawRing(block: block)
            // A typed queue destroys what nobody drained; no producer can be mid-insert now.
            if let itemType = ring.itemType {
                _ = drain(max: Int.max, taking: { itemType.destroyItem(at: $0) }, { _ in })
            }
            overflowList(ring)?.deallocate()
            ring.deallocate()
        }
    }

    // MARK: producers

    /// The ring, allocating it on first use with `Items` recorded as the item type.
    @inlinable @inline(__always)
    func ring<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        let word = ringWord.load(ordering: .acquiring)
        if _fastPath(word & 1 == 0) { return RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped) }
        return allocateRing(recording: items)
    }

    /// The ring, with no item type recorded (tests that play a producer).
    @inlinable var ring: RawRing { ring(recording: UntypedItems.self) }

    /// The first enqueue's allocation. A send cannot throw, so a failure traps; an owner that
    /// must survive it calls `reserveRing()` first.
    @usableFromInline @inline(never)
    func allocateRing<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        do {
            return try installRing(itemType: items)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Allocates the ring now unless it exists, so no later enqueue can fail to. Any thread.
    package func reserveRing() throws(RingAllocationError) {
        try reserveRing(recording: UntypedItems.self)
    }

    /// `reserveRing()` recording `items` as the item type.
    package func reserveRing<Items: MPSCQueueItemType>(recording items: Items.Type) throws(RingAllocationError) {
        if ringBlock != nil { return }
        _ = try installRing(itemType: items)
    }

    /// Allocates, records the item type and taken count, and publishes a ring. One CAS wins.
    @inline(__always)
    private func installRing(itemType: any MPSCQueueItemType.Type) throws(RingAllocationError) -> RawRing {
        var word = ringWord.load(ordering: .acquiring)
        if let block = MPSCQueue.block(word) { return RawRing(block: block) }
        let fresh = try RawRing(tryMailboxCapacity: nextRingCapacity, slotBytes: slotBytes)
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

    /// The overflow path's ring, under the overflow lock: a fresh one if it was given back.
    func currentRingUnderLock(replacing old: RawRing) -> RawRing {
        if let block = ringBlock { return RawRing(block: block) }
        do {
            return try installRing(itemType: old.itemType ?? UntypedItems.self)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Enqueues the `itemBytes` bytes at `source`, from any thread, as a bitwise move (on
    /// `.closed` nothing is copied). Lock-free unless the ring is full; never fails for space.
    @inlinable @inline(__always)
    package func enqueue(moving source: UnsafeRawPointer) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: UntypedItems.self)
    }

    /// `enqueue(moving:)` recording `items` as the item type.
    @inlinable @inline(__always)
    package func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type,
                                                   signalling unit: UnsafeMutableRawPointer? = nil) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: items, signalling: unit)
    }

    /// `enqueue(moving:recording:)` with the item size known statically. `unit`: the owner
    /// whose state word is this queue's idle flag (`claimConsumer`).
    @inlinable @inline(__always)
    package func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                   recording items: Items.Type,
                                                   signalling unit: UnsafeMutableRawPointer? = nil) -> EnqueueResult {
        assert(itemBytes == self.itemBytes, "enqueue of \(itemBytes)-byte items into a queue of \(self.itemBytes)-byte items")
        if closed.load(ordering: .relaxed) { return .closed }
        if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes, signalling: unit) { return result }
        // No ring: a free first slot takes the item here, before the out-of-line call.
        if hasFirstSlot, let becameNonEmpty = enqueueInFirstSlot(moving: source, itemBytes: itemBytes, signalling: unit) {
            return .accepted(becameNonEmpty: becameNonEmpty)
        }
        return enqueueAllocatingRing(moving: source, itemBytes: itemBytes, recording: items, signalling: unit)
    }

    /// `enqueueIfRing`, inside a ring epoch section when one is needed.
    @inlinable @inline(__always)
    func enqueueIfRingInSectionIfNeeded(moving source: UnsafeRawPointer, itemBytes: Int,
                                        signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult? {
        _slowPath(ckshim_epoch_depth() == 0) && reclaimable
            ? enqueueInSection(moving: source, itemBytes: itemBytes, signalling: unit)
            : enqueueIfRing(moving: source, itemBytes: itemBytes, signalling: unit)
    }

    /// Allocates the ring, then inserts. Reached once the first slot is taken (or the queue
    /// has none: "The first slot"). Out of line, so metadata is looked up only here.
    @inlinable @inline(never)
    func enqueueAllocatingRing<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                          recording items: Items.Type,
                                                          signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult {
        while true {
            _ = allocateRing(recording: items)
            if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes, signalling: unit) { return result }
        }
    }

    /// The first slot's producer ("The first slot"): claim, write, publish, a full fence, then
    /// the idle-flag look. `becameNonEmpty`, or nil with nothing copied when the slot is taken.
    @usableFromInline
    func enqueueInFirstSlot(moving source: UnsafeRawPointer, itemBytes: Int, signalling unit: UnsafeMutableRawPointer?) -> Bool? {
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(hookIdentity)
        #endif
        guard idleOrFirstSlot.load(ordering: .relaxed) == FirstSlot.free,
              idleOrFirstSlot.compareExchange(expected: FirstSlot.free, desired: FirstSlot.claimed, ordering: .relaxed).exchanged
        else { return nil }
        MPSCQueue.copyItem(to: firstItemAddress, from: source, byteCount: itemBytes)
        #if DEBUG
        MPSCQueueTestHook.publishIfArmed(hookIdentity)
        #endif
        idleOrFirstSlot.store(FirstSlot.published, ordering: .releasing)
        // The publish before the idle-flag load, on every architecture ("The first slot").
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return claimConsumer(signalling: unit)
    }

    /// Takes the first slot's item, if one was published, into `body`: for the owner's deinit,
    /// which knows the item type. Consumer only.
    package func takeFirstSlotItem(_ body: (UnsafeMutableRawPointer) -> Void) {
        guard idleOrFirstSlot.load(ordering: .acquiring) == FirstSlot.published else { return }
        idleOrFirstSlot.store(FirstSlot.spent, ordering: .relaxed)
        body(firstItemAddress)
    }

    /// `enqueueIfRing` inside a ring epoch section. Out of line: pool workers never need it.
    @usableFromInline @inline(never)
    func enqueueInSection(moving source: UnsafeRawPointer, itemBytes: Int, signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult? {
        ckshim_epoch_enter()
        defer { ckshim_epoch_exit() }
        return enqueueIfRing(moving: source, itemBytes: itemBytes, signalling: unit)
    }

    /// The insert and the idle-flag claim; nil, with nothing done, when there is no ring.
    @inlinable @inline(__always)
    func enqueueIfRing(moving source: UnsafeRawPointer, itemBytes: Int, signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult? {
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(hookIdentity)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }
        return insert(moving: source, itemBytes: itemBytes,
                      into: RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped), signalling: unit)
    }

    /// The insert into `ring` or its overflow, then the idle-flag claim.
    @inlinable @inline(__always)
    func insert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing, signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult {
        .accepted(becameNonEmpty: produce(moving: source, itemBytes: itemBytes, into: ring, signalling: unit,
                                          Overflowing.self).unsafelyUnwrapped)
    }

    /// The producer's sequence, the only one: insert (claim a slot, copy, publish), fence,
    /// look at the idle flag ("Who runs the consumer"). `Policy` says what a full ring or an
    /// active overflow does. Returns `becameNonEmpty`, or nil with nothing copied when the
    /// policy declines. Needs a ring epoch section if `sendNeedsSection`.
    @inlinable @inline(__always)
    func produce<Policy: FullRingPolicy>(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing,
                                         signalling unit: UnsafeMutableRawPointer?, _: Policy.Type) -> Bool? {
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(hookIdentity)
        #endif
        if !overflowActive.load(ordering: .acquiring) {
            if ringInsert(moving: source, itemBytes: itemBytes, into: ring) {
                ckshim_fence_atomic_load()  // the ticket CAS before the flag load (free on x86)
                return claimConsumer(signalling: unit)
            }
            guard Policy.overflows else { return nil }  // full
        } else if !Policy.overflows {
            // Behind an active overflow, if the lock is free now: no fence ("Overflow appends").
            guard Policy.appendsBehindOverflow,
                  overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
            else { return nil }
            let appended = appendBehindActiveOverflow(source: source, ring: ring, itemBytes: itemBytes)
            overflowLock.store(false, ordering: .releasing)
            return appended ? claimConsumer(signalling: unit) : nil
        }
        if !enqueueOverflow(source: source, ring: ring, itemBytes: itemBytes) {
            // The setter's Dekker fence ("Overflow appends").
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
        return claimConsumer(signalling: unit)
    }

    /// True when a send from this thread must enter a ring epoch section first.
    @inlinable package var sendNeedsSection: Bool { _slowPath(ckshim_epoch_depth() == 0) && reclaimable }

    /// The ring path of `enqueue` alone: `becameNonEmpty`, or nil with nothing copied, for
    /// the caller to make the full enqueue. Needs a ring epoch section if `sendNeedsSection`.
    @inlinable @inline(__always)
    package func enqueueOnRing(moving source: UnsafeRawPointer, itemBytes: Int, signalling unit: UnsafeMutableRawPointer? = nil) -> Bool? {
        assert(unit == nil || signalsUnit, "enqueueOnRing(signalling:) on a queue that keeps its idle flag")
        assert(!sendNeedsSection, "enqueueOnRing outside a ring epoch section on a reclaimable queue")
        if closed.load(ordering: .relaxed) { return nil }
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(hookIdentity)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }  // no ring yet, or given back
        return produce(moving: source, itemBytes: itemBytes,
                       into: RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped),
                       signalling: unit, RingOrActiveOverflow.self)
    }

    /// Claims a slot, copies the item and publishes it. False when full or sealed. The caller
    /// owes the fence before its idle-flag load.
    @inlinable @inline(__always)
    func ringInsert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing) -> Bool {
        var ticket: UInt32 = 0
        guard let slot = ring.reserveMultiProducer(slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes), ticket: &ticket) else {
            return false
        }
        MPSCQueue.copyItem(to: slot, from: source, byteCount: itemBytes)
        #if DEBUG
        MPSCQueueTestHook.publishIfArmed(hookIdentity)
        #endif
        ring.publishMultiProducer(slot: slot, ticket: ticket)
        return true
    }

    /// The full-ring path. True: appended behind an active overflow, no fence owed
    /// ("Overflow appends"); false: `enqueueSlow` ran.
    @inlinable @inline(__always)
    func enqueueOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
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
    func appendBehindActiveOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
        guard overflowActive.load(ordering: .relaxed), let list = overflowList(ring), let tailBase = list.tail else { return false }
        let tail = OverflowChunk(tailBase)
        let index = tail.count
        guard index < tail.capacity else { return false }
        MPSCQueue.copyItem(to: tail.slot(index, slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes)), from: source, byteCount: itemBytes)
        tail.count = index + 1
        list.appendCount = list.appendCount &+ 1
        return true
    }

    /// Enqueues a word queue's item; see `enqueue(moving:)`.
    @inlinable @inline(__always)
    package func enqueue(word: UInt) -> EnqueueResult {
        assert(itemBytes == 8, "enqueue(word:) on a queue of \(itemBytes)-byte items")
        var word = word
        return enqueue(moving: &word)
    }

    /// Copies an item in whole words, or overlapping smaller pieces; memmove above 32 bytes.
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
    /// A queue that signals a unit it is not given answers true: the owner's `schedule`
    /// then decides by T1/T2, which is correct but costs an RMW.
    @inlinable @inline(__always)
    func claimConsumer(signalling unit: UnsafeMutableRawPointer? = nil) -> Bool {
        if let unit { return !UnitHeader.at(unit).pointee.isDue }
        if signalsUnit { return true }
        return idleOrFirstSlot.load(ordering: .relaxed) == FirstSlot.idle
            && idleOrFirstSlot.compareExchange(expected: FirstSlot.idle, desired: FirstSlot.busy,
                                               ordering: .acquiringAndReleasing).exchanged
    }

    /// After a waiter is recorded outside the queue (a bounded mailbox): true means schedule
    /// the consumer. The fence is the producer's half of the Dekker pair.
    package func claimConsumerForWaiter(signalling unit: UnsafeMutableRawPointer? = nil) -> Bool {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return claimConsumer(signalling: unit)
    }

    /// Ring-only enqueue: nil, with nothing copied, when full or overflowing. A sealed ring
    /// reads as full, so a bounded mailbox is not reclaimable.
    @inlinable @inline(__always)
    package func tryEnqueue(moving source: UnsafeRawPointer) -> EnqueueResult? {
        tryEnqueue(moving: source, recording: UntypedItems.self)
    }

    /// `tryEnqueue(moving:)` recording `items` as the item type.
    @inlinable @inline(__always)
    package func tryEnqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type,
                                                      signalling unit: UnsafeMutableRawPointer? = nil) -> EnqueueResult? {
        if closed.load(ordering: .relaxed) { return .closed }
        let entered = _slowPath(ckshim_epoch_depth() == 0) && reclaimable
        if entered { ckshim_epoch_enter() }
        defer { if entered { ckshim_epoch_exit() } }
        return tryEnqueueInsert(moving: source, recording: items, signalling: unit)
    }

    /// The ring-only insert of `tryEnqueue`.
    @inlinable @inline(__always)
    func tryEnqueueInsert<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type,
                                                    signalling unit: UnsafeMutableRawPointer?) -> EnqueueResult? {
        produce(moving: source, itemBytes: itemBytes, into: ring(recording: items), signalling: unit, RingOnly.self)
            .map { .accepted(becameNonEmpty: $0) }
    }

    /// The full-ring path ("Ring, then overflow"), entered holding the overflow lock.
    @usableFromInline @inline(never)
    func enqueueSlow(source: UnsafeRawPointer, ring loaded: RawRing) {
        defer { overflowLock.store(false, ordering: .releasing) }
        // The lock orders this load after a detach ("Giving the ring back").
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
    func makeOverflowList(_ ring: RawRing) -> OverflowList {
        let list = OverflowList.allocate()
        ring.overflowListBase = list.base
        return list
    }

    /// A new tail chunk, twice the last one's size. Under overflowLock.
    @inline(never)
    func appendOverflowChunk(to list: OverflowList, after tail: OverflowChunk?) -> OverflowChunk {
        let capacity = tail.map { Swift.min($0.capacity * 2, OverflowChunk.maximumCapacity) } ?? OverflowChunk.firstCapacity
        let fresh = OverflowChunk.allocate(capacity: capacity, slotBytes: slotBytes)
        if let tail { tail.next = fresh.base } else { list.head = fresh.base }
        list.tail = fresh.base
        return fresh
    }

    /// Pointer convenience for `enqueue(word:)`.
    @inlinable @inline(__always)
    package func enqueue(_ pointer: UnsafeMutableRawPointer) -> EnqueueResult {
        enqueue(word: UInt(bitPattern: pointer))
    }

    // MARK: consumer

    /// Hands up to `max` items, FIFO per producer, to `body`; `take` moves each out. Consumer
    /// only, never from inside `body`. No atomic read-modify-write per item.
    @inlinable @inline(__always)
    package func drain<Item>(max: Int, lingering: LingerPermit = .never, taking take: (UnsafeMutableRawPointer) -> Item,
                             _ body: (Item) -> Void) -> DrainOutcome {
        drain(max: max, lingering: lingering, itemBytes: itemBytes, taking: take, body)
    }

    /// `drain` with the item size known statically; `signallingUnit` skips a test.
    /// `firstSlotSpent`: the caller saw `firstSlotIsLive` false, so the drain skips the slot
    /// (spent is final); a hot caller keeps the slot's rare path out of its own code.
    @inlinable @inline(__always)
    package func drain<Item>(max: Int, lingering: LingerPermit = .never, itemBytes: Int, signallingUnit: Bool = false,
                             firstSlotSpent: Bool = false,
                             taking take: (UnsafeMutableRawPointer) -> Item, _ body: (Item) -> Void) -> DrainOutcome {
        assert(itemBytes == self.itemBytes, "drain of \(itemBytes)-byte items from a queue of \(self.itemBytes)-byte items")
        assert(!signallingUnit || signalsUnit, "drain(signallingUnit: true) of a queue that keeps its idle flag")
        assert(!firstSlotSpent || !firstSlotIsLive, "drain(firstSlotSpent: true) of a queue whose first slot is live")
        // The first slot, while not spent ("The first slot"): its item, if queued, is the head.
        let first = firstSlotSpent ? FirstSlot.spent : idleOrFirstSlot.load(ordering: .acquiring)
        if _slowPath(FirstSlot.isLive(first)) {
            let look = firstSlotLook(first)
            if look == FirstSlot.claimed { return .more }  // its producer has not published
            if look == FirstSlot.published {
                let item = take(firstItemAddress)
                idleOrFirstSlot.store(FirstSlot.spent, ordering: .relaxed)  // before the hand-off
                body(item)
                // Anything behind it is in a ring, which the next turn drains.
                if ringWord.load(ordering: .acquiring) & 1 == 0 || max == 1 { return .more }
                return signallingUnit ? runDry(nil) : goIdle(nil)
            }
        }
        let slotBytes = MPSCQueue.slotBytes(forItemBytes: itemBytes)
        let word = ringWord.load(ordering: .acquiring)
        var taken = 0
        guard _fastPath(word & 1 == 0) else { return signallingUnit ? runDry(nil) : goIdle(nil) }
        var ring = RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped)
        while taken < max {
            // Pending overflow items first ("Ring, then overflow").
            if let list = overflowList(ring), _slowPath(list.pendingChunk != nil) {
                handOutPending(list, OverflowChunk(list.pendingChunk.unsafelyUnwrapped), ring: ring, taken: &taken,
                               max: max, slotBytes: slotBytes, take, body)
                // A take whose growth was missed: try again between pending runs.
                if _slowPath(reclaimable && !ringGrown.load(ordering: .relaxed)), let grown = growIfQuiescent(ring) {
                    ring = grown
                }
                continue
            }
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
            if overflowActive.load(ordering: .acquiring), let current = takeOverflowIfQuiescent(ring) {
                ring = current
                continue
            } else if let worker = lingering.worker, taken > 0, Worker.nextSlotIsEmpty(worker),
                      lingerForMore(ring, worker: worker) {
                continue  // something arrived while the drain lingered
            } else {
                return signallingUnit ? runDry(ring) : goIdle(ring)
            }
        }
        return .more
    }

    /// A drain's look at a first slot that is not spent ("The first slot"): `published` when
    /// its item is queued (acquire), `claimed` when its producer has still not published
    /// after a bounded wait, `free` when nothing is queued in it. Consumer only.
    @usableFromInline @inline(never)
    func firstSlotLook(_ state: UInt8) -> UInt8 {
        #if DEBUG
        MPSCQueueTestHook.firstSlotLookIfArmed(hookIdentity)
        #endif
        // Free with no ring: nothing is queued. Free with a ring: its maker found the slot
        // taken first, so the looks below (after the acquire of the ring word) find the claim.
        if state == FirstSlot.free, ringWord.load(ordering: .acquiring) & 1 != 0 { return FirstSlot.free }
        assert(idleOrFirstSlot.load(ordering: .acquiring) != FirstSlot.free, "a ring while the first slot is free")
        return waitForPublish { idleOrFirstSlot.load(ordering: .acquiring) == FirstSlot.published }
            ? FirstSlot.published : FirstSlot.claimed
    }

    /// Where the first slot's item lies: the two words after the ring word and the bytes.
    @inlinable var firstItemAddress: UnsafeMutableRawPointer {
        withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) } + MPSCQueue.firstItemOffset
    }

    /// The offset of `firstItemLow` (MPSCQueueLayoutTests checks it).
    @inlinable package static var firstItemOffset: Int { 16 }

    /// Empty looks a lingering drain makes before it goes idle.
    @usableFromInline static let lingerPolls = 64

    /// The lingering looks ("Lingering"): true when something arrived. Consumer only.
    @usableFromInline @inline(never)
    func lingerForMore(_ ring: RawRing, worker: UnsafeMutableRawPointer) -> Bool {
        // An active overflow here waits for a publish: goIdle's bounded wait handles it.
        guard !overflowActive.load(ordering: .acquiring), Worker.hasNothingElseToRun(worker) else { return false }
        for _ in 0..<MPSCQueue.lingerPolls {
            #if DEBUG
            MPSCQueueTestHook.lingerIfArmed(hookIdentity)
            #endif
            ckshim_stall()
            if ring.headIsReadySingleConsumer(slotBytes: slotBytes)
                || overflowActive.load(ordering: .acquiring) {
                return true
            }
        }
        return false
    }

    /// Hands out a run of the first pending chunk's items. A taken chunk's count is final,
    /// so the run is known at its start.
    @inlinable @inline(__always)
    func handOutPending<Item>(_ list: OverflowList, _ chunk: OverflowChunk, ring: RawRing, taken: inout Int,
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
            let list = overflowList(ring).unsafelyUnwrapped
            list.handedOut = list.handedOut &+ 1
            ring.takenCount = ring.takenCount &+ 1  // before the hand-off (see drain)
            body(item)
            taken &+= 1
        } while taken != end
        endPendingRun(ring)
    }

    /// Frees the first pending chunk once its last item is out. Consumer only.
    @usableFromInline @inline(never)
    func endPendingRun(_ ring: RawRing) {
        let list = overflowList(ring).unsafelyUnwrapped
        let chunk = OverflowChunk(list.pendingChunk.unsafelyUnwrapped)
        if list.pendingIndex == chunk.count { releasePendingChunk(list, chunk) }
    }

    /// Word form of `drain(max:taking:_:)` (a queue of 8-byte items).
    @inlinable
    package func drain(max: Int, _ body: (UInt) -> Void) -> DrainOutcome {
        drain(max: max, taking: { $0.load(as: UInt.self) }, body)
    }

    /// Frees a used-up pending chunk and moves to the next. Consumer only.
    @usableFromInline @inline(never)
    func releasePendingChunk(_ list: OverflowList, _ chunk: OverflowChunk) {
        list.pendingChunk = chunk.next
        list.pendingIndex = 0
        chunk.deallocate()
    }

    /// The consumer side of the idle flag: store idle, fence, look again.
    @inlinable @inline(__always)
    func goIdle(_ ring: RawRing?) -> DrainOutcome {
        assert(ring.flatMap { overflowList($0) }?.pendingChunk == nil, "goIdle with overflow items pending")
        if signalsUnit { return runDry(ring) }
        idleOrFirstSlot.store(FirstSlot.idle, ordering: .sequentiallyConsistent)
        #if !arch(x86_64)
        // The store→load barrier; on x86-64 the seq_cst store is one.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        #endif
        if let ring {
            if ring.isQuiescent && !overflowActive.load(ordering: .sequentiallyConsistent) { return .empty }
            return keepTurn(ring)
        }
        // A ring installed since the drain looked stands in for the claim.
        guard let block = ringBlock else { return .empty }
        return keepTurn(RawRing(block: block))
    }

    /// goIdle of a queue that signals its unit ("The unit as the idle flag").
    @inlinable @inline(__always)
    func runDry(_ ring: RawRing?) -> DrainOutcome {
        guard let ring else { return .empty }
        if ring.isQuiescent { return .empty }
        return keepUnitTurn(ring)
    }

    /// Waits for a claimed slot's publish and keeps the turn. Consumer only.
    @usableFromInline @inline(never)
    func keepUnitTurn(_ ring: RawRing) -> DrainOutcome {
        if !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// Keeps the turn unless a producer took the flag. Consumer only.
    @usableFromInline @inline(never)
    func keepTurn(_ ring: RawRing?) -> DrainOutcome {
        guard idleOrFirstSlot.compareExchange(expected: FirstSlot.idle, desired: FirstSlot.busy,
                                              ordering: .acquiringAndReleasing).exchanged
        else { return .empty }
        if let ring, !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// Looks `waitForPublish` makes before it yields the CPU once.
    @usableFromInline static let commitPolls = 64

    /// Waits for the claimed ring slot at `c_head` to be published.
    @usableFromInline @inline(never)
    func waitForCommit(_ ring: RawRing) {
        _ = waitForPublish { ring.headIsReadySingleConsumer(slotBytes: slotBytes) }
    }

    /// Waits a bounded time for a claimed slot's publish (a ring slot, or the first slot),
    /// yielding once for a preempted producer: true once `published` says so. Consumer only.
    func waitForPublish(_ published: () -> Bool) -> Bool {
        for _ in 0..<MPSCQueue.commitPolls {
            #if DEBUG
            MPSCQueueTestHook.commitWaitIfArmed(hookIdentity)
            #endif
            if published() { return true }
            ckshim_stall()
        }
        if Worker.currentHasNothingElseToRun() { sched_yield() }
        return published()
    }

    /// Pointer form of `drain(max:_:)`.
    @inlinable
    package func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> DrainOutcome {
        drain(max: max) { (word: UInt) in body(UnsafeMutableRawPointer(bitPattern: word)!) }
    }

    /// Moves the overflow list into `pending` if the ring is quiescent, and swaps a small
    /// first ring for a full-size one at the same moment ("Growing the ring"). Returns the
    /// ring to go on with; nil when nothing was taken. Consumer only.
    @usableFromInline @inline(never)
    func takeOverflowIfQuiescent(_ ring: RawRing) -> RawRing? {
        guard overflowActive.load(ordering: .acquiring) else { return nil }
        // Allocated before the lock, so producers never wait for malloc.
        let larger = fullRingForGrowth(ring)
        var grew = false
        let taken = withOverflowLock { () -> Bool in
            guard ring.isQuiescent, let list = overflowList(ring), let head = list.head else { return false }
            if let larger { grew = swapUnderLock(ring, for: larger) }
            assert(list.pendingChunk == nil)
            list.pendingChunk = head
            list.pendingIndex = 0
            list.head = nil
            list.tail = nil
            overflowActive.store(false, ordering: .releasing)
            return true
        }
        return finishGrowth(from: ring, to: larger, grew: grew) ?? (taken ? ring : nil)
    }

    /// Swaps a small first ring for a full-size one if it is quiescent ("Growing the ring"):
    /// the retry after a take whose seal lost. The new ring, or nil. Consumer only.
    @usableFromInline @inline(never)
    func growIfQuiescent(_ ring: RawRing) -> RawRing? {
        guard let larger = fullRingForGrowth(ring) else { return nil }
        let grew = withOverflowLock { ring.isQuiescent && swapUnderLock(ring, for: larger) }
        return finishGrowth(from: ring, to: larger, grew: grew)
    }

    /// A full-size ring to grow into, when `ring` is a small first ring. Consumer only.
    func fullRingForGrowth(_ ring: RawRing) -> RawRing? {
        guard reclaimable, ring.capacity < capacity else { return nil }
        return try? RawRing(tryMailboxCapacity: capacity, slotBytes: slotBytes)
    }

    /// Under the overflow lock, with `ring` quiescent: seals it and publishes `larger`,
    /// carrying the item type, the taken count and the overflow list. False when a
    /// producer's claim beat the seal. Consumer only.
    func swapUnderLock(_ ring: RawRing, for larger: RawRing) -> Bool {
        #if DEBUG
        if MPSCQueueTestHook.loseGrowthSeal.exchange(false, ordering: .relaxed) { return false }
        #endif
        guard ring.seal() else { return false }
        larger.itemType = ring.itemType
        larger.takenCount = ring.takenCount
        larger.overflowListBase = ring.overflowListBase
        ring.overflowListBase = nil  // the retired block frees no list
        ringGrown.store(true, ordering: .relaxed)
        ringWord.store(UInt(bitPattern: larger.block), ordering: .releasing)
        return true
    }

    /// After the lock: retires the small ring and returns the new one, or frees the unused
    /// full ring and returns nil.
    func finishGrowth(from ring: RawRing, to larger: RawRing?, grew: Bool) -> RawRing? {
        guard let larger else { return nil }
        if grew {
            ckshim_ring_retire(ring.ring)
            return larger
        }
        larger.deallocate()
        return nil
    }

    // MARK: giving the ring back

    /// Gives an idle reclaimable queue's ring back ("Giving the ring back"). False when a
    /// producer came first. Consumer only, right after a drain returned `.empty`.
    @discardableResult
    package func releaseIdleRing() -> Bool {
        var dropped = 0
        return releaseIdleRing(overflowAppends: &dropped)
    }

    /// `releaseIdleRing()`, adding the given-back list's overflow count to `dropped`.
    package func releaseIdleRing(overflowAppends dropped: inout Int) -> Bool {
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

    /// True when the queue has a ring and took no item since the last call. One walker.
    package func ringIdleSinceLastLook() -> Bool {
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
    package var hasRing: Bool { ringBlock != nil }

    /// Closes the queue: later enqueues get `.closed`. Any thread; true for the closing call.
    @discardableResult @usableFromInline
    package func markClosed() -> Bool {
        !closed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// True once `markClosed()` ran.
    @usableFromInline package var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Items counted and not yet drained (a snapshot).
    @usableFromInline package var approximateCount: Int {
        let first = FirstSlot.isHead(idleOrFirstSlot.load(ordering: .relaxed)) ? 1 : 0
        return first + readingRing { ring, _ in
            guard let ring else { return 0 }
            guard let list = overflowList(ring) else { return ring.claimedCount }
            let handedOut = list.handedOut
            return ring.claimedCount + Swift.max(list.appendCount - handedOut, 0)
        }
    }

    /// True while a consumer turn is running or due; false means nothing to drain. Only for
    /// a queue that keeps its idle flag: a unit's owner reads its unit's state word.
    @inlinable package var hasPendingWork: Bool {
        assert(!signalsUnit, "hasPendingWork on a queue that signals its unit")
        return idleOrFirstSlot.load(ordering: .acquiring) != FirstSlot.idle
    }

    /// Enqueues that ever took the overflow path.
    package var overflowAppends: Int {
        readingRing { ring, _ in ring.flatMap { overflowList($0)?.appendCount } ?? 0 }
    }

    /// Runs `body` holding the overflow spin lock.
    @usableFromInline
    func withOverflowLock<R>(_ body: () -> R) -> R {
        lockOverflow()
        defer { overflowLock.store(false, ordering: .releasing) }
        return body()
    }

    /// Takes the overflow spin lock.
    @inlinable @inline(__always)
    func lockOverflow() {
        if !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            lockOverflowContended()
        }
    }

    /// Test-and-test-and-set with back-off, yielding now and then for a preempted holder.
    @usableFromInline @inline(never)
    func lockOverflowContended() {
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

    /// Overflow chunks held; 0 once a burst drained. Consumer only (tests).
    package var overflowChunksHeld: Int {
        guard let block = ringBlock, let list = overflowList(RawRing(block: block)) else {
            return 0
        }
        return OverflowList.chunks(from: list.pendingChunk) + withOverflowLock { OverflowList.chunks(from: list.head) }
    }

    /// Bytes the current ring occupies; 0 when it has none.
    package var ringBytes: Int {
        readingRing { ring, _ in ring.map { RawRing.mailboxAllocationSize(capacity: $0.capacity, slotBytes: slotBytes) } ?? 0 }
    }
}

extension RawRing {
    /// The item type a typed owner recorded, written before the ring is published.
    var itemType: (any MPSCQueueItemType.Type)? {
        get { UnsafeRawPointer(ckshim_ring_item_type_slot(ring)).load(as: (any MPSCQueueItemType.Type)?.self) }
        nonmutating set {
            UnsafeMutableRawPointer(ckshim_ring_item_type_slot(ring)).storeBytes(of: newValue, as: (any MPSCQueueItemType.Type)?.self)
        }
    }
}

/// What `MPSCQueue.produce` does when the ring is full or an overflow is active.
@usableFromInline
package protocol FullRingPolicy {
    /// A full ring or an active overflow: take the overflow lock and append (never fails).
    static var overflows: Bool { get }
    /// Without `overflows`: append behind an active overflow if its lock is free now.
    static var appendsBehindOverflow: Bool { get }
}

/// `enqueue`: the ring, else the ordered overflow.
@usableFromInline
package enum Overflowing: FullRingPolicy {
    @inlinable package static var overflows: Bool { true }
    @inlinable package static var appendsBehindOverflow: Bool { true }
}

/// `enqueueOnRing`: the ring, or behind an active overflow without waiting; else nil, for the
/// caller's full enqueue.
@usableFromInline
package enum RingOrActiveOverflow: FullRingPolicy {
    @inlinable package static var overflows: Bool { false }
    @inlinable package static var appendsBehindOverflow: Bool { true }
}

/// `tryEnqueue` (a bounded mailbox): the ring only.
@usableFromInline
package enum RingOnly: FullRingPolicy {
    @inlinable package static var overflows: Bool { false }
    @inlinable package static var appendsBehindOverflow: Bool { false }
}

#if DEBUG
/// Debug builds only: one-shot hooks a test arms on one queue to replay a race exactly.
@usableFromInline package enum MPSCQueueTestHook {
    @usableFromInline static let enqueue = QueueHookPoint()
    @usableFromInline static let linger = QueueHookPoint()
    @usableFromInline static let commitWait = QueueHookPoint()
    @usableFromInline static let claim = QueueHookPoint()
    @usableFromInline static let publish = QueueHookPoint()
    @usableFromInline static let firstSlotLook = QueueHookPoint()
    /// Makes `releaseIdleRing` skip its seal, for a test that shows the seal is needed.
    package static let skipSeal = Atomic<Bool>(false)
    /// Makes the next growth seal lose, as to a producer's claim ("Growing the ring").
    package static let loseGrowthSeal = Atomic<Bool>(false)

    /// Runs `action` once, in the next enqueue on `queue`, before it claims a slot.
    package static func armClaim(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        claim.arm(queue.hookIdentity, action)
    }

    @inlinable @inline(__always)
    package static func claimIfArmed(_ queue: UInt) { claim.fireIfArmed(queue) }

    /// Runs `action` once, in the next ring enqueue on `queue`, between write and publish
    /// (under the overflow lock, if the enqueue holds it).
    package static func armPublish(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        publish.arm(queue.hookIdentity, action)
    }

    @inlinable @inline(__always)
    package static func publishIfArmed(_ queue: UInt) { publish.fireIfArmed(queue) }

    /// Runs `action` once, in the next drain of `queue` that finds its first slot not spent,
    /// after its look at the slot and before its look at the ring word.
    package static func armFirstSlotLook(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        firstSlotLook.arm(queue.hookIdentity, action)
    }

    @inlinable @inline(__always)
    package static func firstSlotLookIfArmed(_ queue: UInt) { firstSlotLook.fireIfArmed(queue) }

    /// Runs `action` once, in the next enqueue on `queue`, before inserting.
    package static func arm(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        enqueue.arm(queue.hookIdentity, action)
    }

    @inlinable @inline(__always)
    package static func pauseIfArmed(_ queue: UInt) { enqueue.fireIfArmed(queue) }

    /// Runs `action` once, in the next lingering look of a drain of `queue`.
    package static func armLinger(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        linger.arm(queue.hookIdentity, action)
    }

    /// Disarms `armLinger` if it has not fired.
    package static func disarmLinger() { linger.disarm() }

    @inlinable @inline(__always)
    package static func lingerIfArmed(_ queue: UInt) { linger.fireIfArmed(queue) }

    /// Runs `action` once, before a drain of `queue` looks for a producer's publish.
    package static func armCommitWait(_ queue: borrowing MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        commitWait.arm(queue.hookIdentity, action)
    }

    /// Disarms `armCommitWait` if it has not fired.
    package static func disarmCommitWait() { commitWait.disarm() }

    @inlinable @inline(__always)
    package static func commitWaitIfArmed(_ queue: UInt) { commitWait.fireIfArmed(queue) }
}

/// Debug builds only: one hook point; a CAS disarms it, so one thread fires.
@usableFromInline package final class QueueHookPoint: Sendable {
    /// The armed queue's identity, 0 when disarmed.
    @usableFromInline let target = Atomic<UInt>(0)
    private let action = Lock<(@Sendable () -> Void)?>(nil)

    init() {}

    func arm(_ queue: UInt, _ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
        target.store(queue, ordering: .releasing)
    }

    func disarm() {
        target.store(0, ordering: .releasing)
        action.withLock { $0 = nil }
    }

    @inlinable @inline(__always)
    func fireIfArmed(_ queue: UInt) {
        let armed = target.load(ordering: .relaxed)
        if armed != 0, armed == queue { fire(armed) }
    }

    @usableFromInline func fire(_ armed: UInt) {
        guard target.compareExchange(expected: armed, desired: 0, ordering: .acquiringAndReleasing).exchanged,
              let action = action.withLock({ body -> (@Sendable () -> Void)? in defer { body = nil }; return body })
        else { return }
        action()
    }
}
#endif
