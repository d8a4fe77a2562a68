import Foundation
import Synchronization
import Testing
import FastMailboxTestSupport

/// `eventually` in an async test suspends between looks: as many waiters as the cooperative
/// pool has threads still leave a thread for the task they wait for.
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
}
