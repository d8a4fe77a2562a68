// MessageEncoding: how a typed message travels through a mailbox's ring, the private
// encoding detail of Mailbox<Message>.
//
// A message of at most RawRing.maximumSlotBytes bytes (and at most 8-byte alignment)
// travels inside its ring slot: the sender copies its bytes in, the consumer moves them
// out. A bigger message is moved into one heap box whose pointer travels instead, freed
// when it is consumed. A message that finds the ring full goes, the same way, into a slot
// of the overflow list's current chunk. MailboxTests counts these allocations.
//
// Ownership (E1): a message is moved, never copied: its bytes are forgotten at the source.
// `withMovable` lends them to a callee that must move them out, into the queue or back
// with `take`. (E2): every accepted item is taken out exactly once, by a drain or by the
// queue's deinit. For that, the enqueue that allocates the ring records
// `MessageEncoding<Message>` in it, and the deinit destroys leftovers with `destroyItem`.

import MNScheduler

@usableFromInline
enum MessageEncoding<Message> {
    /// True when `Message` does not fit a ring slot and travels boxed: more than 64 bytes,
    /// or aligned to more than the slots' 8 bytes.
    @inlinable @inline(__always)
    static var isBoxed: Bool {
        MemoryLayout<Message>.size > RawRing.maximumSlotBytes || MemoryLayout<Message>.alignment > 8
    }

    /// Bytes of one queue item: the message's `size` (not its stride: a sender's copy may
    /// be exactly `size` bytes long, e.g. the payload of an Optional), or the box pointer.
    @inlinable @inline(__always)
    static var itemBytes: Int { isBoxed ? MemoryLayout<UInt>.size : Swift.max(1, MemoryLayout<Message>.size) }

    /// A queue sized for `Message` items.
    @usableFromInline static func makeQueue(capacity: Int) throws(RingCapacityError) -> MPSCQueue {
        try MPSCQueue(capacity: capacity, itemBytes: itemBytes)
    }

    /// Runs `body` with a pointer to `message`'s bytes; `body` must move the message out
    /// (with `MPSCQueue.enqueue(moving:)`, or `take(from:)`): the bytes are forgotten
    /// afterwards. Specialised code keeps the message in a stack slot: no allocation.
    @inlinable @inline(__always)
    static func withMovable<R>(_ message: consuming Message, _ body: (UnsafeMutableRawPointer) -> R) -> R {
        // An Optional's payload starts at offset 0; storing nil over the moved-out bytes
        // makes `held` forget them instead of destroying them.
        var held: Message? = consume message
        // Unprotected (no stack canary): `body` touches only the message's own bytes, so a
        // canary would guard nothing and cost every sending function a check.
        return _withUnprotectedUnsafeMutablePointer(to: &held) { pointer in
            let result = body(UnsafeMutableRawPointer(pointer))
            pointer.initialize(to: nil)
            return result
        }
    }

    /// Moves the message at `source` into `queue` (boxing it if it is too big for a slot).
    /// On `.closed` the message is still at `source` (the caller takes it back).
    @inlinable @inline(__always)
    static func enqueue(movingFrom source: UnsafeMutableRawPointer, into queue: MPSCQueue,
                        boxed: Bool = isBoxed) -> MPSCQueue.EnqueueResult {
        if !boxed { return queue.enqueue(moving: source, recording: MessageEncoding.self) }
        return enqueueBoxed(movingFrom: source, into: queue)
    }

    /// `enqueue(movingFrom:into:)` for code specialised for `Message`, where boxing and
    /// size are constants, so the copy is a fixed sequence of word moves. Unspecialised
    /// code calls `enqueue(movingFrom:into:boxed:)`, which reads the size from the queue.
    @inlinable @inline(__always)
    static func enqueueSpecialised(movingFrom source: UnsafeMutableRawPointer, into queue: MPSCQueue) -> MPSCQueue.EnqueueResult {
        if !isBoxed { return queue.enqueue(moving: source, itemBytes: itemBytes, recording: MessageEncoding.self) }
        return enqueueBoxed(movingFrom: source, into: queue)
    }

    /// The ring path alone (MPSCQueue.enqueueOnRing): nil for a boxed message, or when the
    /// full enqueue is needed.
    @inlinable @inline(__always)
    static func enqueueOnRing(movingFrom source: UnsafeMutableRawPointer, into queue: MPSCQueue,
                              signallingUnit: Bool = false) -> Bool? {
        if isBoxed { return nil }
        return queue.enqueueOnRing(moving: source, itemBytes: itemBytes, signallingUnit: signallingUnit)
    }

    @usableFromInline @inline(never)
    static func enqueueBoxed(movingFrom source: UnsafeMutableRawPointer, into queue: MPSCQueue) -> MPSCQueue.EnqueueResult {
        let typed = source.bindMemory(to: Message.self, capacity: 1)
        let box = UnsafeMutablePointer<Message>.allocate(capacity: 1)
        box.moveInitialize(from: typed, count: 1)
        var word = UInt(bitPattern: box)
        let result = queue.enqueue(moving: &word, recording: MessageEncoding.self)
        if result == .closed {
            typed.moveInitialize(from: box, count: 1)
            box.deallocate()
        }
        return result
    }

    /// Moves the message out of a queue item (a slot, or a box, which is freed).
    @inlinable @inline(__always)
    static func take(from item: UnsafeMutableRawPointer, boxed: Bool = isBoxed) -> Message {
        if !boxed { return item.bindMemory(to: Message.self, capacity: 1).move() }
        let box = item.load(as: UnsafeMutablePointer<Message>.self)
        defer { box.deallocate() }
        return box.move()
    }

    /// Moves `message` into `queue`; on `.closed` hands it back.
    @inlinable @inline(__always)
    static func enqueue(_ message: consuming Message, into queue: MPSCQueue) -> (MPSCQueue.EnqueueResult, Message?) {
        withMovable(message) { source in
            let result = enqueue(movingFrom: source, into: queue)
            return (result, result == .closed ? take(from: source, boxed: false) : nil)
        }
    }

    /// Ring-only form of `enqueue(_:into:)` (a bounded mailbox, `Mailbox.trySend`): nil
    /// result = full. On anything but acceptance the message is handed back.
    @inlinable
    static func tryEnqueue(_ message: consuming Message, into queue: MPSCQueue) -> (MPSCQueue.EnqueueResult?, Message?) {
        if isBoxed {
            let box = UnsafeMutablePointer<Message>.allocate(capacity: 1)
            box.initialize(to: message)
            var word = UInt(bitPattern: box)
            let result = queue.tryEnqueue(moving: &word, recording: MessageEncoding.self)
            if case .accepted? = result { return (result, nil) }
            defer { box.deallocate() }
            return (result, box.move())
        }
        return withMovable(message) { source in
            let result = queue.tryEnqueue(moving: source, recording: MessageEncoding.self)
            if case .accepted? = result { return (result, nil) }
            return (result, take(from: source, boxed: false))
        }
    }

    /// Allocates `queue`'s ring now, recording `Message` as its item type.
    static func reserveRing(of queue: MPSCQueue) throws(RingAllocationError) {
        try queue.reserveRing(recording: MessageEncoding.self)
    }
}

/// What a queue's deinit uses to destroy the messages nobody drained (E2).
extension MessageEncoding: MPSCQueueItemType {
    @usableFromInline static func destroyItem(at item: UnsafeMutableRawPointer) {
        _ = take(from: item)
    }
}
