// MessageEncoding — how a typed message travels through a 64-bit ring slot.
//
// Three encodings, chosen per message type at compile time (every test below folds to a
// constant once the generic code is specialised):
//   .inline  trivially copyable values of at most 8 bytes (Int, small enums without
//            payloads, Bool, Double…) are stored bit-for-bit in the slot: 0 allocations.
//   .object  class references: the slot holds the retained pointer
//            (Unmanaged.passRetained / takeRetainedValue): 0 allocations, one retain.
//   .boxed   every other value (structs, enums with payloads, existentials) is moved into
//            one heap cell (UnsafeMutablePointer.allocate): exactly 1 allocation per
//            message, freed when it is consumed.
// MailboxTests proves those numbers with MallocCounter.
//
// Ownership: encode() consumes the message into the word (+1 reference where there is
// one); decode() takes it back out exactly once. A word must be decoded exactly once or
// released with discard() — the mailbox guarantees that for everything it accepted.

@usableFromInline
enum MessageEncodingKind: Sendable { case inline, object, boxed }

@usableFromInline
enum MessageEncoding<Message> {
    @inlinable @inline(__always)
    static var kind: MessageEncodingKind {
        if _isPOD(Message.self) && MemoryLayout<Message>.size <= MemoryLayout<UInt>.size { return .inline }
        if Message.self is AnyObject.Type && MemoryLayout<Message>.size == MemoryLayout<AnyObject>.size { return .object }
        return .boxed
    }

    @inlinable @inline(__always)
    static func encode(_ message: Message) -> UInt { encode(message, as: kind) }

    @inlinable @inline(__always)
    static func decode(_ word: UInt) -> Message { decode(word, as: kind) }

    /// Encode with a kind computed once and cached: unspecialised generic code (an actor
    /// cell called through the scheduler's vtable) would otherwise pay metadata look-ups
    /// and a dynamic cast to recompute `kind` for every message.
    @inlinable @inline(__always)
    static func encode(_ message: Message, as kind: MessageEncodingKind) -> UInt {
        switch kind {
        case .inline:
            var word: UInt = 0
            withUnsafeMutablePointer(to: &word) { UnsafeMutableRawPointer($0).storeBytes(of: message, as: Message.self) }
            return word
        case .object:
            let object = unsafeBitCast(message, to: AnyObject.self)
            return UInt(bitPattern: Unmanaged.passRetained(object).toOpaque())
        case .boxed:
            // A raw, typed allocation rather than a generic box class: forming
            // MessageBox<Message>'s metadata costs a runtime look-up per message in
            // unspecialised code; the pointer needs none.
            let box = UnsafeMutablePointer<Message>.allocate(capacity: 1)
            box.initialize(to: message)
            return UInt(bitPattern: box)
        }
    }

    @inlinable @inline(__always)
    static func decode(_ word: UInt, as kind: MessageEncodingKind) -> Message {
        switch kind {
        case .inline:
            var bits = word
            return withUnsafeMutablePointer(to: &bits) { UnsafeMutableRawPointer($0).load(as: Message.self) }
        case .object:
            let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: word)!).takeRetainedValue()
            return unsafeBitCast(object, to: Message.self)
        case .boxed:
            let box = UnsafeMutablePointer<Message>(bitPattern: word)!
            let message = box.move()
            box.deallocate()
            return message
        }
    }
}
