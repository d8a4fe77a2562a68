import Foundation
import Synchronization
import Testing
import FastMailboxTestSupport

/// `eventually` and `SignalingProbe.waitForCount` in an async test suspend between looks:
/// as many waiters as the cooperative pool has threads still leave a thread for the task
/// they wait for.
@Suite struct EventuallyTests {
    private final class Flag: Sendable { let value = Atomic<Bool>(false) }

    @Test("waiters filling the cooperative pool do not starve the task they wait for")
    func waitersLeaveThreadsFree() async {
        let done = Flag()
        let width = ProcessInfo.processInfo.activeProcessorCount
        let seen = await withTaskGroup(of: Bool.self) { group -> [Bool] in
            for _ in 0..<width {
                group.addTask { await eventually(timeout: .seconds(5)) { done.value.load(ordering: .acquiring) } }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(50))  // after the waiters took the threads
                done.value.store(true, ordering: .releasing)
                return true
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen.allSatisfy { $0 }, "a waiter timed out: the setter found no thread")
    }

    @Test("probe waiters filling the cooperative pool do not starve the task that records")
    func probeWaitersLeaveThreadsFree() async {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let probes = (0..<width).map { _ in SignalingProbe<Int>() }
        let seen = await withTaskGroup(of: Bool.self) { group -> [Bool] in
            for probe in probes {
                group.addTask { await probe.waitForCount(1, timeout: .seconds(5)) }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(50))  // after the waiters took the threads
                for probe in probes { probe.record(1) }
                return true
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen.allSatisfy { $0 }, "a waiter timed out: the recorder found no thread")
    }
}
