// OverflowChunk — one link of MPSCQueue's ordered overflow list: a 16-byte header (the
// next chunk, capacity, slot size, count) followed by `capacity` slots of the queue's
// `slotBytes`. Chunks of the maximum capacity come from, and go back to,
// OverflowChunkPool (reused for a while instead of freed at once).
// Who touches it when is stated once, in MNScheduler.docc/MailboxQueue.md, "Ring, then
// overflow".

/// A handle on one overflow chunk (a raw allocation; copying the handle does not copy it).
@usableFromInline
struct OverflowChunk {
    @usableFromInline let base: UnsafeMutableRawPointer

    /// Bytes before the first slot: next (8), capacity (2), slot size (2), count (4).
    @inlinable static var headerBytes: Int { 16 }  // computed: a constant where inlined
    /// Items in the first chunk of a chain; each next chunk doubles, up to `maximumCapacity`.
    @usableFromInline static let firstCapacity = 32
    /// The largest chunk (items).
    @usableFromInline static let maximumCapacity = 1_024

    @inlinable init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// A new, empty chunk of `capacity` slots of `slotBytes` (16-byte aligned slots base):
    /// from OverflowChunkPool when it is of the maximum capacity and the pool has one.
    @usableFromInline
    static func allocate(capacity: Int, slotBytes: Int) -> OverflowChunk {
        if capacity == maximumCapacity, let pooled = OverflowChunkPool.take(slotBytes: slotBytes) {
            return OverflowChunk(pooled)
        }
        let base = UnsafeMutableRawPointer.allocate(byteCount: headerBytes + capacity * slotBytes, alignment: 16)
        base.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        base.storeBytes(of: UInt16(capacity), toByteOffset: 8, as: UInt16.self)
        base.storeBytes(of: UInt16(slotBytes), toByteOffset: 10, as: UInt16.self)
        base.storeBytes(of: 0, toByteOffset: 12, as: UInt32.self)
        return OverflowChunk(base)
    }

    /// The chunk after this one in the chain (nil at the tail).
    @inlinable var next: UnsafeMutableRawPointer? {
        get { base.load(as: UnsafeMutableRawPointer?.self) }
        nonmutating set { base.storeBytes(of: newValue, as: UnsafeMutableRawPointer?.self) }
    }

    /// Slots in this chunk.
    @inlinable var capacity: Int { Int(base.load(fromByteOffset: 8, as: UInt16.self)) }

    /// Bytes of one slot (the queue's `slotBytes`).
    @inlinable var slotBytes: Int { Int(base.load(fromByteOffset: 10, as: UInt16.self)) }

    /// Slots written so far (the producers' append index).
    @inlinable var count: Int {
        get { Int(base.load(fromByteOffset: 12, as: UInt32.self)) }
        nonmutating set { base.storeBytes(of: UInt32(newValue), toByteOffset: 12, as: UInt32.self) }
    }

    /// The slot at `index` (< capacity ≤ 1,024, slots of at most 64 bytes: wrapping
    /// arithmetic, no overflow check on the drain's path).
    @inlinable func slot(_ index: Int, slotBytes: Int) -> UnsafeMutableRawPointer {
        base + (OverflowChunk.headerBytes &+ index &* slotBytes)
    }

    /// Frees this chunk (its items must have been moved out, or need no release): into
    /// OverflowChunkPool when it is of the maximum capacity. For a draining consumer
    /// (MPSCQueue.releasePendingChunk); a whole chain goes to malloc
    /// (OverflowList.deallocateChain).
    @usableFromInline func deallocate() {
        if capacity == OverflowChunk.maximumCapacity {
            OverflowChunkPool.give(base, slotBytes: slotBytes)
        } else {
            base.deallocate()
        }
    }
}
