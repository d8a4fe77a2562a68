import Dispatch
import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

#if DEBUG  // every test here arms a test hook, which release builds compile out

/// A lingering drain (MPSCQueue.swift, "Lingering") looks again before going idle, but only
/// on a pool worker of two or more with nothing else to run; what arrives meanwhile is taken
/// in the same drain, and nothing else about the idle protocol changes. Serialized: the
/// tests arm MPSCQueueTestHook's linger point, which holds one queue for the whole process.
@Suite(.serialized) struct MPSCQueueLingeringTests {
    /// Runs `body` inside one turn on a worker of `scheduler` and returns its result.
    private func inTurn<R: Sendable>(_ scheduler: Scheduler, _ body: @escaping @Sendable () -> R) -> R? {
        let result = Lock<R?>(nil)
        let done = DispatchSemaphore(value: 0)
        let unit = ClosureUnit { _, _ in
            let value = body()
            result.withLock { $0 = value }
            done.signal()
            return .idle
        }
        scheduler.schedule(unit)
        guard done.wait(timeout: .now() + 20) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// Drains `queue` (one item already in it) with `lingering`; the item a lingering look
    /// would see is enqueued by the test hook at the first such look. Returns the items taken
    /// by this one drain, the outcome, and whether the late enqueue had to claim the consumer.
    private func drainWithLateArrival(_ queue: MPSCQueueBox, lingering: Bool)
    -> (taken: [UInt], outcome: MPSCQueue.DrainOutcome, lateClaimed: Bool) {
        let lateClaimed = Atomic<Int>(-1)
        MPSCQueueTestHook.armLinger(queue.queue) {
            if case .accepted(let became) = queue.enqueue(word: 2) {
                lateClaimed.store(became ? 1 : 0, ordering: .sequentiallyConsistent)
            }
        }
        var taken: [UInt] = []
        let outcome = queue.drain(max: 16, lingering: lingering, taking: { $0.load(as: UInt.self) }) { taken.append($0) }
        if lateClaimed.load(ordering: .sequentiallyConsistent) == -1 {
            // No lingering look happened: disarm, then deliver the late item the plain way.
            MPSCQueueTestHook.disarmLinger()
            if case .accepted(let became) = queue.enqueue(word: 2) {
                lateClaimed.store(became ? 1 : 0, ordering: .sequentiallyConsistent)
            }
        }
        return (taken, outcome, lateClaimed.load(ordering: .sequentiallyConsistent) == 1)
    }

    /// On a worker of a two-worker pool with nothing else to run: one item queued, a drain
    /// with `lingering`, a late item at the first lingering look (if any). The items that
    /// drain took, whether it then went idle, and whether the late producer had to claim
    /// the consumer (schedule it).
    private func lateArrival(lingering: Bool) throws -> (taken: [UInt], wentIdle: Bool, lateClaimed: Bool) {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let queue = try MPSCQueueBox(capacity: 8)
        _ = queue.enqueue(word: 1)
        let result = inTurn(scheduler) { () -> ([UInt], Bool, Bool) in
            let (taken, outcome, lateClaimed) = self.drainWithLateArrival(queue, lingering: lingering)
            return (taken, outcome == .empty, lateClaimed)
        }
        let (taken, wentIdle, lateClaimed) = try #require(result)
        return (taken, wentIdle, lateClaimed)
    }

    @Test("a lingering drain on an idle worker of two takes what arrives while it looks again, in the same drain")
    func lingeringTakesLateArrival() throws {
        let (taken, wentIdle, lateClaimed) = try lateArrival(lingering: true)
        #expect(taken == [1, 2])      // both in one drain
        #expect(wentIdle)             // then idle, by the usual protocol
        #expect(!lateClaimed)         // the late producer found the consumer running: no schedule
    }

    @Test("a drain that does not linger goes idle at once, and the late producer must schedule the consumer")
    func plainDrainGoesIdle() throws {
        let (taken, wentIdle, lateClaimed) = try lateArrival(lingering: false)
        #expect(taken == [1])
        #expect(wentIdle)
        #expect(lateClaimed)
    }

    @Test("a lingering drain does not spin on an overflow it cannot take yet (a producer between claim and commit)")
    func lingeringLeavesUntakeableOverflow() throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let queue = try MPSCQueueBox(capacity: 4)
        for word: UInt in 1...4 { _ = queue.enqueue(word: word) }  // 3 in the ring, 4 overflows
        var first: [UInt] = []
        _ = queue.drain(max: 1) { first.append($0) }
        // A producer that claimed the freed slot and has not committed it yet.
        var ticket: UInt32 = 0
        let slot = try #require(queue.ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket))
        let result = inTurn(scheduler) { () -> [UInt] in
            var taken: [UInt] = []
            let outcome = queue.drain(max: 16, lingering: true, taking: { $0.load(as: UInt.self) }) { taken.append($0) }
            return outcome == .more ? taken : []
        }
        slot.storeBytes(of: UInt(5), as: UInt.self)
        queue.ring.publishMultiProducer(slot: slot, ticket: ticket)
        // A drain that spun until this commit would not have come back in time.
        #expect(first == [1])
        #expect(result == [2, 3], "the drain returns .more with the overflow still waiting")
        var rest: [UInt] = []
        while queue.drain(max: 16, { rest.append($0) }) == .more {}
        #expect(rest == [5, 4])
    }

    @Test("no lingering with one worker, off the pool, or while the worker's next slot holds a unit")
    func lingeringOnlyWhenNothingElseRuns() throws {
        #expect(!Worker.currentMayLinger())  // off the pool
        let one = try makeScheduler(workers: 1)
        defer { one.shutdown() }
        #expect(inTurn(one) { Worker.currentMayLinger() } == false)
        let two = try makeScheduler(workers: 2)
        defer { two.shutdown() }
        #expect(inTurn(two) { Worker.currentMayLinger() } == true)
        // A unit this turn made runnable sits in the next slot: this worker has work.
        let waiting = ClosureUnit()
        #expect(inTurn(two) { () -> Bool in
            two.schedule(waiting)
            return Worker.currentMayLinger()
        } == false)
        #expect(waitUntil { waiting.runs.load(ordering: .sequentiallyConsistent) == 1 })
    }
}
#endif
