import Dispatch
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

/// The current worker is a C thread-local (ckshim.h, "current worker"): set by a worker's
/// loop on its own thread, cleared when the loop returns, nil on every other thread; and
/// schedule() uses it only for this scheduler's workers.
@Suite struct CurrentWorkerTests {
    @Test("a worker of one scheduler scheduling another scheduler's unit sends it to that scheduler's worker")
    func crossSchedulerSchedule() throws {
        let a = try makeScheduler(workers: 1)
        let b = try makeScheduler(workers: 1)
        defer { a.shutdown(); b.shutdown() }
        let seen = Atomic<Int>(0)
        let ranOnB = DispatchSemaphore(value: 0)
        let onB = ClosureUnit { _, _ in
            seen.store((b.isCurrentThreadWorker ? 1 : 0) | (a.isCurrentThreadWorker ? 2 : 0) | 4,
                       ordering: .sequentiallyConsistent)
            ranOnB.signal()
            return .idle
        }
        // From a's worker: b's unit must not land in a's next slot (it would run on a's thread).
        let onA = ClosureUnit { _, _ in
            b.schedule(onB)
            return .idle
        }
        a.schedule(onA)
        #expect(ranOnB.wait(timeout: .now() + 20) == .success)
        #expect(seen.load(ordering: .sequentiallyConsistent) == 5)
        #expect(onB.runs.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test("threads that are not workers see no current worker, while workers run on other threads")
    func offPoolThreads() throws {
        let a = try makeScheduler(workers: 2)
        defer { a.shutdown() }
        let busy = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let blocker = ClosureUnit { _, _ in
            busy.signal()
            release.wait()  // keeps a worker inside a turn while the other threads look
            return .idle
        }
        a.schedule(blocker)
        #expect(busy.wait(timeout: .now() + 20) == .success)
        let offPool = Atomic<Int>(0)
        onThreads(3) { _ in
            if Scheduler.currentWorkerIndex == nil && !a.isCurrentThreadWorker {
                offPool.wrappingAdd(1, ordering: .sequentiallyConsistent)
            }
        }
        release.signal()
        #expect(offPool.load(ordering: .sequentiallyConsistent) == 3)
        #expect(Scheduler.currentWorkerIndex == nil)
        #expect(!a.isCurrentThreadWorker)
    }

    @Test("a donated worker's thread is worker 0 during its turns and no worker once runDonatedWorker returns")
    func donatedWorkerClearsOnReturn() throws {
        let scheduler = try Scheduler(configuration: SchedulerConfiguration(
            workers: 1, throughput: 64, spinCount: 8, runQueueCapacity: 256,
            pinWorkers: false, readsEnvironment: false), donatedWorkers: 1)
        let during = Atomic<Int>(-1)
        let after = Atomic<Int>(0)
        let ran = DispatchSemaphore(value: 0)
        let unit = ClosureUnit { _, _ in
            during.store(scheduler.isCurrentThreadWorker ? (Scheduler.currentWorkerIndex ?? -2) : -3,
                         ordering: .sequentiallyConsistent)
            ran.signal()
            return .idle
        }
        scheduler.schedule(unit)
        onThreads(2) { index in
            if index == 0 {
                let donated = scheduler.runDonatedWorker()  // returns once shut down
                after.store(donated && Scheduler.currentWorkerIndex == nil && !scheduler.isCurrentThreadWorker ? 1 : 2,
                            ordering: .sequentiallyConsistent)
            } else {
                _ = ran.wait(timeout: .now() + 20)
                scheduler.shutdown()
            }
        }
        #expect(during.load(ordering: .sequentiallyConsistent) == 0)
        #expect(after.load(ordering: .sequentiallyConsistent) == 1)
    }
}
