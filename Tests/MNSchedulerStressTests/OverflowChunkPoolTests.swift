import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

/// Maximum-size overflow chunks are reused for a while instead of freed at once, and go
/// back to malloc within two intervals (OverflowChunkPool.swift). The pool is process-wide
/// and every live scheduler's monitor ages it, so this suite runs in the stress target,
/// alone. The checks are about chunks this test gave and their addresses, not counts, in
/// slot sizes no other suite's messages use.
@Suite(.serialized) struct OverflowChunkPoolTests {
    @Test("a maximum-size chunk given back is reused by the next chunk of its slot size; other sizes and small chunks are not pooled")
    func chunksAreReusedBySlotSize() {
        let chunk = OverflowChunk.allocate(capacity: OverflowChunk.maximumCapacity, slotBytes: 56)
        #expect(chunk.capacity == OverflowChunk.maximumCapacity && chunk.slotBytes == 56)
        chunk.count = 7
        chunk.next = chunk.base  // garbage a reuse must reset
        chunk.deallocate()
        let again = OverflowChunk.allocate(capacity: OverflowChunk.maximumCapacity, slotBytes: 56)
        #expect(again.base == chunk.base, "the pooled chunk was not reused")
        #expect(again.count == 0 && again.next == nil && again.slotBytes == 56)
        again.deallocate()
        // Another slot size does not get it.
        let other = OverflowChunk.allocate(capacity: OverflowChunk.maximumCapacity, slotBytes: 8)
        #expect(other.base != chunk.base)
        other.deallocate()
        // A small chunk is an ordinary allocation, never pooled.
        let small = OverflowChunk.allocate(capacity: OverflowChunk.firstCapacity, slotBytes: 56)
        let smallBase = small.base
        small.deallocate()
        #expect(!OverflowChunkPool.contains(smallBase))
    }

    @Test("pooled chunks go back to malloc after sitting through a whole interval")
    func poolIsTrimmed() {
        let chunk = OverflowChunk.allocate(capacity: OverflowChunk.maximumCapacity, slotBytes: 48)
        chunk.deallocate()
        #expect(OverflowChunkPool.contains(chunk.base))
        // Two agings an interval apart, an interval after the last one: the first moves the
        // chunk into the older generation, the second frees it.
        let next = max(OverflowChunkPool.agedAt, monotonicNanoseconds()) &+ OverflowChunkPool.intervalNanoseconds
        OverflowChunkPool.trimIfDue(now: next)
        let stillPooled = OverflowChunkPool.contains(chunk.base)
        OverflowChunkPool.trimIfDue(now: next &+ OverflowChunkPool.intervalNanoseconds)
        #expect(stillPooled, "a chunk given back less than an interval ago was freed")
        #expect(!OverflowChunkPool.contains(chunk.base), "a chunk older than an interval is still pooled")
    }

    @Test("after a scheduler's shutdown, pooled chunks go back to malloc within about two seconds")
    func shutdownLeavesNothingPooled() throws {
        let scheduler = try makeScheduler(workers: 1)
        let chunk = OverflowChunk.allocate(capacity: OverflowChunk.maximumCapacity, slotBytes: 48)
        chunk.deallocate()
        scheduler.shutdown()
        let deadline = monotonicNanoseconds() + 6 * OverflowChunkPool.intervalNanoseconds
        while OverflowChunkPool.contains(chunk.base), monotonicNanoseconds() < deadline { usleep(10_000) }
        #expect(!OverflowChunkPool.contains(chunk.base), "the pool kept a chunk long after the last scheduler's shutdown")
    }

    /// What Guarantees.md ("Idle actors are small") promises of a drained burst, exactly: no
    /// chunk stays with the queue once its last item is out; the small first links of the
    /// chain go back to malloc then, the maximum-size ones into this pool, which frees them
    /// only at its second aging after that (between one and two intervals later).
    @Test("a drained burst's chunks leave the queue as their last item is taken: small ones to malloc, full ones to the pool until aged")
    func drainedBurstChunksArePooledThenFreed() throws {
        let queue = try MPSCQueueBox(capacity: 8, itemBytes: 56)  // a slot size no other suite's messages use
        var item = [UInt8](repeating: 0, count: 56)
        let burst = 7 + 32 + 64 + 128 + 256 + 512 + 3 * OverflowChunk.maximumCapacity  // 7 in the ring
        for n in 0..<burst {
            item.withUnsafeMutableBytes { $0.storeBytes(of: n, as: Int.self) }
            _ = item.withUnsafeBytes { queue.enqueue(moving: $0.baseAddress!) }
        }
        // The producers' chain, in order: 32, 64, …, 512, then three of the maximum.
        let list = try #require(queue.ringBlock.flatMap { queue.queue.overflowList(RawRing(block: $0)) })
        var chunks: [OverflowChunk] = []
        var next = list.head
        while let base = next { chunks.append(OverflowChunk(base)); next = OverflowChunk(base).next }
        #expect(chunks.map(\.capacity) == [32, 64, 128, 256, 512] + Array(repeating: OverflowChunk.maximumCapacity, count: 3))
        let full = chunks.filter { $0.capacity == OverflowChunk.maximumCapacity }.map(\.base)
        let small = chunks.filter { $0.capacity != OverflowChunk.maximumCapacity }.map(\.base)
        // Drain it all, in order.
        var expected = 0
        while queue.drain(max: 1_000, taking: { $0.load(as: Int.self) }, { n in
            #expect(n == expected)
            expected += 1
        }) == .more {}
        #expect(expected == burst)
        // The queue holds no chunk any more (the list itself stays with the ring).
        #expect(list.head == nil && list.pendingChunk == nil)
        #expect(!small.contains { OverflowChunkPool.contains($0) }, "a small chunk was pooled, not freed")
        #expect(full.allSatisfy { OverflowChunkPool.contains($0) }, "a full chunk was freed at once (or reused by another test)")
        // Two agings an interval apart free them (the monitor's tick, the reclaim timer, the
        // next give or take of a chunk, or a scheduler's shutdown would age the pool).
        let next1 = max(OverflowChunkPool.agedAt, monotonicNanoseconds()) &+ OverflowChunkPool.intervalNanoseconds
        OverflowChunkPool.trimIfDue(now: next1)
        OverflowChunkPool.trimIfDue(now: next1 &+ OverflowChunkPool.intervalNanoseconds)
        #expect(!full.contains { OverflowChunkPool.contains($0) }, "a pooled chunk outlived two agings")
    }
}
