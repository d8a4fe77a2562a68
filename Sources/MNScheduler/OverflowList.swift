// OverflowList: MPSCQueue's ordered overflow (the chain of OverflowChunks holding what a
// full ring could not) and its counts, in one raw allocation made by the first overflow
// append. Who touches what when: MNScheduler.docc/MailboxQueue.md, "Ring, then overflow".
//
// Layout (bytes): producers' part [0, 24): head, tail, appendCount; consumer's part
// [112, 136): pendingChunk, pendingIndex, handedOut: on different cache lines wherever
// the 16-byte-aligned block starts. The two counts are read by other threads, with
// relaxed atomics; the other fields are confined and accessed plainly.

import CConcurrencyKit

/// A handle on one overflow list (see the file comment; copying the handle does not copy it).
@usableFromInline
struct OverflowList {
    @usableFromInline let base: UnsafeMutableRawPointer

    @usableFromInline static let consumerOffset = 112
    @usableFromInline static let allocationBytes = 136

    @inlinable init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// A new, empty list.
    static func allocate() -> OverflowList {
        let base = UnsafeMutableRawPointer.allocate(byteCount: allocationBytes, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: allocationBytes)
        return OverflowList(base)
    }

    /// Frees the list and every chunk it still holds.
    func deallocate() {
        OverflowList.deallocateChain(pendingChunk)
        OverflowList.deallocateChain(head)
        base.deallocate()
    }

    // Producers, under the queue's overflow lock.
    /// First chunk of the producers' chain, in arrival order (nil when empty).
    @inlinable var head: UnsafeMutableRawPointer? {
        get { base.load(as: UnsafeMutableRawPointer?.self) }
        nonmutating set { base.storeBytes(of: newValue, as: UnsafeMutableRawPointer?.self) }
    }
    /// Last chunk of the producers' chain (nil when empty).
    @inlinable var tail: UnsafeMutableRawPointer? {
        get { base.load(fromByteOffset: 8, as: UnsafeMutableRawPointer?.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: 8, as: UnsafeMutableRawPointer?.self) }
    }
    /// Appends ever made (written under the lock; read by anyone).
    @inlinable var appendCount: Int {
        get { Int(truncatingIfNeeded: ckshim_load_u64_relaxed(base + 16)) }
        nonmutating set { ckshim_store_u64_relaxed(base + 16, UInt64(truncatingIfNeeded: newValue)) }
    }

    // The consumer's.
    /// The chain taken from the producers, not yet handed out from `pendingIndex` on.
    @inlinable var pendingChunk: UnsafeMutableRawPointer? {
        get { base.load(fromByteOffset: OverflowList.consumerOffset, as: UnsafeMutableRawPointer?.self) }
        nonmutating set {
            base.storeBytes(of: newValue, toByteOffset: OverflowList.consumerOffset, as: UnsafeMutableRawPointer?.self)
        }
    }
    /// The next item to hand out of `pendingChunk` (during a run, already past it).
    @inlinable var pendingIndex: Int {
        get { Int(base.load(fromByteOffset: OverflowList.consumerOffset + 8, as: UInt32.self)) }
        nonmutating set {
            // ≤ a chunk's capacity (≤ 1,024): no conversion check on the drain's path.
            base.storeBytes(of: UInt32(truncatingIfNeeded: newValue), toByteOffset: OverflowList.consumerOffset + 8, as: UInt32.self)
        }
    }
    /// Items handed out of the overflow so far (consumer writes, anyone reads).
    @inlinable var handedOut: Int {
        get { Int(truncatingIfNeeded: ckshim_load_u64_relaxed(base + (OverflowList.consumerOffset + 16))) }
        nonmutating set {
            ckshim_store_u64_relaxed(base + (OverflowList.consumerOffset + 16), UInt64(truncatingIfNeeded: newValue))
        }
    }

    /// Frees a chain (a deinit, a ring given back) to malloc: the pool keeps only what a
    /// draining consumer is done with.
    static func deallocateChain(_ first: UnsafeMutableRawPointer?) {
        var next = first
        while let base = next {
            next = OverflowChunk(base).next
            base.deallocate()
        }
    }

    /// Chunks in a chain.
    static func chunks(from first: UnsafeMutableRawPointer?) -> Int {
        var held = 0
        var next = first
        while let base = next { held += 1; next = OverflowChunk(base).next }
        return held
    }
}
