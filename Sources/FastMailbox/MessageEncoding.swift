// MessageEncoding: how a typed message travels through a mailbox's ring. A message of at
// most RawRing.maximumSlotBytes bytes and 8-byte alignment travels in its slot (or an
// overflow chunk's); a bigger one in a heap box, freed when consumed.
//
// (E1) a message is moved, never copied: `withMovable` lends its bytes to a callee that
//      must move them out (into the queue, or back with `take`).
// (E2) every accepted item is taken out exactly once, by a drain or by the queue's deinit,
//      which destroys leftovers with the `MessageEncoding<Message>` the ring recorded.

import MNScheduler

@usableFromInline
enum MessageEncoding<Message> {
    /// Over 64 bytes, or aligned to more than 8.
    @inlinable @inline(__always)
    static var isBoxed: Bool {
        MemoryLayout<Message>.size > RawRing.maximumSlotBytes || MemoryLayout<Message>.alignment > 8
    }

    /// The message's `size` (a sender's copy may be exactly that long), or a box pointer.
    @inlinable @inline(__always)
    static var itemBytes: Int { isBoxed ? MemoryLayout<UInt>.size : Swift.max(1, MemoryLayout<Message>.size) }

    @usableFromInline static func makeQueueBox(capacity: Int) throws(RingCapacityError) -> MPSCQueueBox {
        try MPSCQueueBox(capacity: capacity, itemBytes: itemBytes)
    }

    /// Lends `message`'s bytes to `body`, which must move them out (E1). No allocation.
    @inlinable @inline(__always)
    static func withMovable<R>(_ message: consuming Message, _ body: (UnsafeMutableRawPointer) -> R) -> R {
        // No stack canary: `body` touches only the message's own bytes.
        if _isPOD(Message.self) {
            // Plain bytes: what `body` leaves behind needs no destroying.
            var held = copy message
            return _withUnprotectedUnsafeMutablePointer(to: &held) { body(UnsafeMutableRawPointer($0)) }
        }
        // Storing nil over the moved-out payload makes `held` forget it.
        var held: Message? = consume message
        return _withUnprotectedUnsafeMutablePointer(to: &held) { pointer in
            let result = body(UnsafeMutableRawPointer(pointer))
            pointer.initialize(to: nil)
            return result
        }
    }

    /// Boxed if too big. On `.closed` the message is still at `source`.
    @inlinable @inline(__always)
    static func enqueue(movingFrom source: UnsafeMutableRawPointer, into queue: borrowing MPSCQueue,
                        boxed: Bool = isBoxed, signalling unit: UnsafeMutableRawPointer? = nil) -> MPSCQueue.EnqueueResult {
        if !boxed { return queue.enqueue(moving: source, recording: MessageEncoding.self, signalling: unit) }
        return enqueueBoxed(movingFrom: source, into: queue, signalling: unit)
    }

    /// Specialised: boxing and size are constants.
    @inlinable @inline(__always)
    static func enqueueSpecialised(movingFrom source: UnsafeMutableRawPointer, into queue: borrowing MPSCQueue,
                                   signalling unit: UnsafeMutableRawPointer? = nil) -> MPSCQueue.EnqueueResult {
        if !isBoxed {
            return queue.enqueue(moving: source, itemBytes: itemBytes, recording: MessageEncoding.self, signalling: unit)
        }
        return enqueueBoxed(movingFrom: source, into: queue, signalling: unit)
    }

    @usableFromInline @inline(never)
    static func enqueueBoxed(movingFrom source: UnsafeMutableRawPointer, into queue: borrowing MPSCQueue,
                             signalling unit: UnsafeMutableRawPointer?) -> MPSCQueue.EnqueueResult {
        let typed = source.bindMemory(to: Message.self, capacity: 1)
        let box = UnsafeMutablePointer<Message>.allocate(capacity: 1)
        box.moveInitialize(from: typed, count: 1)
        var word = UInt(bitPattern: box)
        let result = queue.enqueue(moving: &word, recording: MessageEncoding.self, signalling: unit)
        if result == .closed {
            typed.moveInitialize(from: box, count: 1)
            box.deallocate()
        }
        return result
    }

    /// From a slot, or a box, which is freed.
    @inlinable @inline(__always)
    static func take(from item: UnsafeMutableRawPointer, boxed: Bool = isBoxed) -> Message {
        if !boxed { return item.bindMemory(to: Message.self, capacity: 1).move() }
        let box = item.load(as: UnsafeMutablePointer<Message>.self)
        defer { box.deallocate() }
        return box.move()
    }

    /// On `.closed` hands it back.
    @inlinable @inline(__always)
    static func enqueue(_ message: consuming Message, into queue: borrowing MPSCQueue,
                        signalling unit: UnsafeMutableRawPointer? = nil) -> (MPSCQueue.EnqueueResult, Message?) {
        withMovable(message) { source in
            let result = enqueue(movingFrom: source, into: queue, signalling: unit)
            return (result, result == .closed ? take(from: source, boxed: false) : nil)
        }
    }

    /// Ring-only: nil means full; unless accepted, the message is handed back.
    @inlinable
    static func tryEnqueue(_ message: consuming Message, into queue: borrowing MPSCQueue,
                           signalling unit: UnsafeMutableRawPointer? = nil) -> (MPSCQueue.EnqueueResult?, Message?) {
        if isBoxed {
            let box = UnsafeMutablePointer<Message>.allocate(capacity: 1)
            box.initialize(to: message)
            var word = UInt(bitPattern: box)
            let result = queue.tryEnqueue(moving: &word, recording: MessageEncoding.self, signalling: unit)
            if case .accepted? = result { return (result, nil) }
            defer { box.deallocate() }
            return (result, box.move())
        }
        return withMovable(message) { source in
            let result = queue.tryEnqueue(moving: source, recording: MessageEncoding.self, signalling: unit)
            if case .accepted? = result { return (result, nil) }
            return (result, take(from: source, boxed: false))
        }
    }

    /// Consumer only; specialised (see MPSCQueue.drain).
    @inlinable @inline(__always)
    static func drain(_ queue: borrowing MPSCQueue, max: Int, lingering: LingerPermit = .never, signallingUnit: Bool = false,
                      _ body: (Message) -> Void) -> MPSCQueue.DrainOutcome {
        queue.drain(max: max, lingering: lingering, itemBytes: itemBytes, signallingUnit: signallingUnit,
                    taking: { take(from: $0) }, body)
    }

    /// For unspecialised code.
    @inlinable @inline(__always)
    static func drain(_ queue: borrowing MPSCQueue, max: Int, boxed: Bool, lingering: LingerPermit = .never,
                      _ body: (Message) -> Void) -> MPSCQueue.DrainOutcome {
        queue.drain(max: max, lingering: lingering, taking: { take(from: $0, boxed: boxed) }, body)
    }

    /// Consumer only: at most one message.
    @inlinable @inline(__always)
    static func takeOne(from queue: borrowing MPSCQueue) -> (Message?, MPSCQueue.DrainOutcome) {
        var taken: Message?
        let outcome = queue.drain(max: 1, taking: { take(from: $0) }) { taken = $0 }
        return (taken, outcome)
    }

    /// Records `Message` as the ring's item type.
    static func reserveRing(of queue: borrowing MPSCQueue) throws(RingAllocationError) {
        try queue.reserveRing(recording: MessageEncoding.self)
    }
}

/// Destroys the messages nobody drained (E2).
extension MessageEncoding: MPSCQueueItemType {
    @usableFromInline static func destroyItem(at item: UnsafeMutableRawPointer) {
        _ = take(from: item)
    }
}
