import Testing
import Synchronization
@testable import MNScheduler

/// A waiter for a queue's overflow lock spins only a bounded number of pauses, then gives
/// the CPU up at every further look (MPSCQueue.swift, "Waiting for the overflow lock"), and
/// its item still lands in order once the holder lets go. Debug builds (the test hook).
@Suite(.serialized) struct MPSCQueueOverflowLockTests {
    @Test("a producer that finds the overflow lock held yields the CPU after at most overflowLockSpinPauses pauses, and its item is delivered in order")
    func waiterYieldsAfterBoundedSpin() throws {
        let queue = try MPSCQueue(capacity: 4)  // 3 usable slots
        for word in 1...4 { _ = queue.enqueue(word: UInt(word)) }  // the 4th overflows
        #expect(queue.overflowAppends == 1)
        let yieldsBefore = MPSCQueueTestHook.overflowLockYields.load(ordering: .relaxed)
        queue.lockOverflow()  // the holder, "preempted" inside its critical section
        let waiterYielded = Atomic<Bool>(false)
        onThreads(2) { index in
            if index == 0 {
                // The holder lets go only once the waiter has given up the CPU: the waiter
                // must get there by itself (no timing: the bound is a liveness bound).
                let yielded = waitUntil {
                    MPSCQueueTestHook.overflowLockYields.load(ordering: .relaxed) > yieldsBefore
                }
                waiterYielded.store(yielded, ordering: .relaxed)
                queue.overflowLock.store(false, ordering: .releasing)
            } else {
                _ = queue.enqueue(word: 5)  // behind the active overflow: waits for the lock
            }
        }
        let yielded = waiterYielded.load(ordering: .relaxed)
        #expect(yielded, "the waiter never yielded the CPU")
        let paused = MPSCQueueTestHook.pausesBeforeOverflowLockYield.load(ordering: .relaxed)
        #expect(paused <= MPSCQueue.overflowLockSpinPauses,
                "the waiter paused \(paused) times before it yielded (at most \(MPSCQueue.overflowLockSpinPauses))")
        var drained: [UInt] = []
        while queue.drain(max: .max, { drained.append($0) }) == .more {}
        #expect(drained == [1, 2, 3, 4, 5])
        #expect(queue.overflowAppends == 2)
    }
}
