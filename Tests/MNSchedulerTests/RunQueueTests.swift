import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

@Suite(.serialized) struct RunQueueTests {
    static func word(_ i: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: i + 1)! }

    @Test("a thief takes half (rounded up) of the victim's queue, oldest first, and runs the first")
    func stealHalf() {
        let victim = RunQueue(capacity: 16), thief = RunQueue(capacity: 16)
        defer { victim.deallocate(); thief.deallocate() }
        for i in 0..<7 { let pushed = victim.push(Self.word(i)); #expect(pushed) }
        let first = victim.stealer.stealHalf(into: thief)
        #expect(first == Self.word(0))
        let counts = (thief.count, victim.count)
        #expect(counts == (3, 3))
        for i in 1...3 { let p = thief.pop(); #expect(p == Self.word(i)) }
        for i in 4...6 { let p = victim.pop(); #expect(p == Self.word(i)) }
        let none = victim.stealer.stealHalf(into: thief)
        #expect(none == nil)
    }

    @Test("a full local queue refuses a push (the worker then spills to the injection queue)")
    func fullRefuses() {
        let queue = RunQueue(capacity: 4)
        defer { queue.deallocate() }
        for i in 0..<3 { let pushed = queue.push(Self.word(i)); #expect(pushed) }
        let refused = !queue.push(Self.word(3))
        #expect(refused)
        let usable = queue.usableCapacity
        #expect(usable == 3)
    }

    #if DEBUG
    /// Runs `body` with violations recorded instead of trapping; returns what was reported.
    private func recordingViolations(_ body: () -> Void) -> [String] {
        let seen = Mutex<[String]>([])
        RunQueue.confinementViolationHook.withLock { hook in
            hook = { violation in seen.withLock { $0.append(violation.description) } }
        }
        defer { RunQueue.confinementViolationHook.withLock { $0 = nil } }
        body()
        return seen.withLock { $0 }
    }

    /// Runs `body` on a new thread and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        JoinableThread(body).join()
    }

    /// Holds an owner handle the way a Worker does (a class's `let`), so a test can reach
    /// it from two threads.
    private final class Holder: @unchecked Sendable {
        let queue: RunQueue
        init(_ queue: consuming RunQueue) { self.queue = queue }
    }

    @Test("debug builds report a push or pop on a thread other than the one that owns the run queue")
    func ownerOperationsFromAnotherThreadAreReported() {
        let holder = Holder(RunQueue(capacity: 16))
        defer { holder.queue.deallocate() }
        let reports = recordingViolations {
            let pushed = holder.queue.push(Self.word(0))  // binds this thread as the owner
            let popped = holder.queue.pop()
            #expect(pushed && popped == Self.word(0))
            onAnotherThread {
                _ = holder.queue.push(Self.word(1))  // the misuse: a second producer
                _ = holder.queue.pop()
                holder.queue.assertOwnerThread("next-slot put")
            }
            let left = holder.queue.pop()  // the owner itself is still fine
            #expect(left == nil)
        }
        #expect(reports.count == 3, "\(reports)")
        #expect(reports.allSatisfy { $0.contains("does not own") }, "\(reports)")
    }

    @Test("debug builds report a second owner handle for one run queue")
    func secondOwnerHandleIsReported() {
        let stealer = RunQueue.Stealer(capacity: 16)
        defer { stealer.deallocate() }
        let reports = recordingViolations {
            let first = RunQueue(owning: stealer)
            let second = RunQueue(owning: stealer)
            _ = (first.count, second.count)
        }
        #expect(reports.count == 1, "\(reports)")
    }

    @Test("stealing from another thread is no violation: the thief pushes into its own queue")
    func stealingIsNotReported() {
        let victim = RunQueue(capacity: 16)
        defer { victim.deallocate() }
        let victimStealer = victim.stealer
        let stolen = Mutex<Int>(0)
        let reports = recordingViolations {
            for i in 0..<8 { let pushed = victim.push(Self.word(i)); #expect(pushed) }
            onAnotherThread {
                let thief = RunQueue(capacity: 16)
                defer { thief.deallocate() }
                var n = victimStealer.stealHalf(into: thief) == nil ? 0 : 1
                while thief.pop() != nil { n += 1 }
                stolen.withLock { $0 = n }
            }
            while victim.pop() != nil {}
        }
        #expect(stolen.withLock { $0 } == 4)
        #expect(reports.isEmpty, "\(reports)")
    }
    #endif
}
