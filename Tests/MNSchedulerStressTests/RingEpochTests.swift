import Testing
import Foundation
import Synchronization
@testable import MNScheduler
import TestSupport

/// The ring epoch's grace period (RingEpoch.swift), in whichever mode this process runs:
/// asymmetric (sections begin without a fence, collections pay a membarrier) where the
/// kernel offers membarrier, fenced elsewhere or with MN_RING_EPOCH=fenced (.ci/run runs
/// this suite and the reclaim suites a second time that way). The epoch is one for the whole process and any
/// worker in a long turn holds it back, so these tests, which wait for every retired block
/// to be freed, run alone, in the stress target.
@Suite(.serialized) struct RingEpochTests {
    /// MN_RING_EPOCH=fenced (any case) in this process's environment.
    static let fencedRequested = getenv(RingEpoch.environmentVariable)
        .map { String(cString: $0).lowercased() == "fenced" } ?? false

    @Test("the mode is decided once: asking again gives the same answer")
    func modeIsStable() {
        let first = RingEpoch.isAsymmetric
        RingEpoch.enter()
        RingEpoch.exit()
        #expect(RingEpoch.isAsymmetric == first)
    }

    @Test("MN_RING_EPOCH=fenced: the process runs the fenced mode (isAsymmetric false), whatever the kernel offers",
          .enabled(if: RingEpochTests.fencedRequested, "run with MN_RING_EPOCH=fenced (.ci/run does)"))
    func fencedWhenAsked() {
        #expect(!RingEpoch.isAsymmetric)
    }

    @Test("a section begun on another thread before the ring was given back holds the block through every collection; it is freed once the section ends")
    func sectionBeforeRetireHoldsTheBlock() throws {
        let queue = try MPSCQueueBox(capacity: 8, reclaimable: true)
        _ = queue.enqueue(word: 1)
        var got: [UInt] = []
        #expect(queue.drain(max: Int.max) { got.append($0) } == .empty)
        #expect(RingEpoch.collect(wait: true) == 0 || waitUntil { RingEpoch.collect(wait: true) == 0 })
        // A reader: a plain thread enters its section (in asymmetric mode: no fence) and reads
        // the ring's taken count through the block, then stays inside.
        let inside = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let seen = Atomic<Int>(-1)
        DispatchQueue.global().async {
            RingEpoch.enter()
            seen.store(queue.dequeuedCount, ordering: .relaxed)
            inside.signal()
            leave.wait()
            RingEpoch.exit()
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)
        #expect(seen.load(ordering: .relaxed) == 1)
        // The consumer gives the ring back: the block is retired, and no collection may free
        // it while the reader's section is open (asymmetric mode: the first collection's
        // membarrier makes the reader's unfenced begin visible to the scan).
        #expect(queue.releaseIdleRing())
        for _ in 0..<5 {
            RingEpoch.collect(wait: true)
            #expect(RingEpoch.pendingBlocks >= 1, "a ring block was freed under an open section")
        }
        leave.signal()
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
        // The queue goes on with a fresh ring.
        _ = queue.enqueue(word: 2)
        #expect(queue.drain(max: Int.max) { got.append($0) } == .empty)
        #expect(got == [1, 2])
    }

    /// Gives back the ring of `count` fresh reclaimable queues: `count` blocks retired.
    static func retireRings(_ count: Int) throws {
        for k in 0..<count {
            let queue = try MPSCQueueBox(capacity: 8, reclaimable: true)
            _ = queue.enqueue(word: UInt(k))
            #expect(queue.drain(max: Int.max) { (_: UInt) in } == .empty)
            #expect(queue.releaseIdleRing())
        }
    }

    @Test("asymmetric mode: a worker's refresh (poll or park) hands retired rings over in batches, one membarrier each; an explicit collection hands over any",
          .enabled(if: RingEpoch.isAsymmetric, "the fenced mode has no membarrier"))
    func refreshHandsOverInBatches() throws {
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
        let few = 3
        try RingEpochTests.retireRings(few)
        let before = RingEpoch.membarrierCount
        for _ in 0..<10 { RingEpoch.refresh() }
        #expect(RingEpoch.membarrierCount == before, "a refresh with fewer than a batch pending issued a membarrier")
        #expect(RingEpoch.pendingBlocks >= few, "blocks handed over by a refresh before a batch was pending")
        // The batch fills: the next refresh hands all of them over with one membarrier.
        try RingEpochTests.retireRings(RingEpoch.refreshBatch - few)
        RingEpoch.refresh()
        #expect(RingEpoch.membarrierCount == before + 1)
        #expect(waitUntil { RingEpoch.refresh(); return RingEpoch.pendingBlocks == 0 })
        #expect(RingEpoch.membarrierCount == before + 1, "freeing a handed-over batch took another membarrier")
        // An explicit collection (as the idle-mailbox walk's) hands over a single block.
        try RingEpochTests.retireRings(1)
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
        #expect(RingEpoch.membarrierCount == before + 2)
    }

    @Test("asymmetric mode: a worker that parks with fewer than a batch of retired rings pending issues no membarrier",
          .enabled(if: RingEpoch.isAsymmetric, "the fenced mode has no membarrier"))
    func parkHandsOverInBatches() throws {
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 1, pinWorkers: false, blockingThresholdMilliseconds: 0, maxBlockingThreads: 0,
            readsEnvironment: false))
        defer { scheduler.shutdown() }
        #expect(waitUntil { scheduler.metrics.parks >= 1 })  // idle from the start
        try RingEpochTests.retireRings(3)
        let before = RingEpoch.membarrierCount
        let parks = scheduler.metrics.parks
        // A turn wakes the worker; it parks again with the three blocks pending. Its park
        // counts first and collects after, so a second turn, which it can only take once
        // back from that park, orders the collection before the check.
        let unit = ClosureUnit()
        scheduler.schedule(unit)
        #expect(waitUntil { unit.runs.load(ordering: .relaxed) == 1 && scheduler.metrics.parks > parks })
        let after = ClosureUnit()
        scheduler.schedule(after)
        #expect(waitUntil { after.runs.load(ordering: .relaxed) == 1 })
        #expect(RingEpoch.membarrierCount == before, "a park with fewer than a batch pending issued a membarrier")
        #expect(RingEpoch.pendingBlocks >= 3)
        #expect(waitUntil { RingEpoch.collect(wait: true) == 0 })
    }
}
