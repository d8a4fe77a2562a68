import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import MNScheduler

/// Maximum-size overflow chunks are reused for a while instead of freed at once, and go
/// back to malloc within two intervals (OverflowChunkPool.swift). Serialized: the pool is
/// process-wide (other suites that overflow a mailbox may use it meanwhile, so the checks
/// are about chunks this test gave and their addresses, not counts; slot sizes no other
/// suite's messages use).
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
}
