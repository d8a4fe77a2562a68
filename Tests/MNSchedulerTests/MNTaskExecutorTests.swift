import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

/// Holds one suspended task's continuation so a test can resume it at a chosen moment.
private final class ParkedContinuation: Sendable {
    let slot = Lock<CheckedContinuation<Void, Never>?>(nil)  // not Mutex: TSan cannot see its futex

    func park(_ continuation: CheckedContinuation<Void, Never>) {
        slot.withLock { $0 = continuation }
    }

    var isParked: Bool { slot.withLock { $0 != nil } }

    func resume() {
        let continuation = slot.withLock { value -> CheckedContinuation<Void, Never>? in
            defer { value = nil }
            return value
        }
        continuation?.resume()
    }
}

@Suite struct MNTaskExecutorTests {
    // The executor retains its scheduler: were it unretained, the resume below would read
    // the freed Scheduler, and AddressSanitizer would report a heap-use-after-free.
    @Test("a task started with scheduler.task that resumes after its Scheduler was released finishes on Swift's global executor")
    func taskOutlivesItsScheduler() async throws {
        let parked = ParkedContinuation()
        var scheduler: Scheduler? = try makeScheduler(workers: 2)
        weak let released = scheduler
        let task = scheduler!.task { () -> Int? in
            await withCheckedContinuation { parked.park($0) }
            return Scheduler.currentWorkerIndex
        }
        #expect(waitUntil { parked.isParked })
        scheduler!.shutdown()
        scheduler = nil
        #expect(released == nil, "the task executor must not keep its Scheduler alive (no cycle)")
        parked.resume()  // enqueues the task's next job on the executor of a freed scheduler
        let workerIndex = await task.value
        #expect(workerIndex == nil, "after shutdown the job runs on Swift's global executor, off the pool")
    }

    @Test("a task with executorPreference that resumes after its Scheduler was released finishes, and so do new ones")
    func preferenceOutlivesItsScheduler() async throws {
        let parked = ParkedContinuation()
        var scheduler: Scheduler? = try makeScheduler(workers: 1)
        let executor = scheduler!.taskExecutor
        let task = Task(executorPreference: executor) { () -> Int in
            await withCheckedContinuation { parked.park($0) }
            return 7
        }
        #expect(waitUntil { parked.isParked })
        scheduler!.shutdown()
        scheduler = nil
        parked.resume()
        #expect(await task.value == 7)
        // The executor alone (its scheduler gone) still accepts new tasks.
        #expect(await Task(executorPreference: executor) { 8 }.value == 8)
    }
}
