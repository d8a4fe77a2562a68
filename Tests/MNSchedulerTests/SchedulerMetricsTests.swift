import Testing
import Foundation
import Synchronization
@testable import MNScheduler
import TestSupport

@Suite("Scheduler metrics", .serialized) struct SchedulerMetricsTests {
    @Test("scheduler metrics count parks and steals, sample busy time and show the injection queue and blocked workers")
    func metricsReflectTheWork() throws {
        let scheduler = try makeScheduler(workers: 2)
        #expect(waitUntil { scheduler.metrics.parks >= 2 })  // both idle workers went to sleep
        let gate = Gate()
        let blocker = ClosureUnit { _, _ in blocking { gate.pass() }; return .idle }
        scheduler.schedule(blocker)
        #expect(gate.waitForArrivals(1))
        let during = scheduler.metrics
        #expect(during.blocking.workersInBlockingSections == 1)
        #expect(during.workers.count == 2)
        gate.open()
        #expect(waitUntil { scheduler.blockingMetrics.spareThreadsRunning == 0 })
        // Many units scheduled from one worker's turn land in its queue; the other steals
        // (if it gets a CPU while they wait: on a loaded machine a batch may finish first,
        // so batches repeat until a steal is seen, at most 20).
        for _ in 0..<20 where scheduler.metrics.steals == 0 {
            let units = (0..<2_000).map { _ in ClosureUnit { _, _ in for _ in 0..<1_000 { _ = monotonicNanoseconds() }; return .idle } }
            let spreader = ClosureUnit { _, _ in for unit in units { scheduler.schedule(unit) }; return .idle }
            scheduler.schedule(spreader)
            #expect(waitUntil { units.allSatisfy { $0.runs.load(ordering: .sequentiallyConsistent) == 1 } })
        }
        #expect(waitUntil { scheduler.metrics.workers.allSatisfy { $0.busyFraction != nil } })
        let after = scheduler.metrics
        #expect(after.steals > 0, "\(after)")
        #expect(after.injectionQueueDepth == 0)
        #expect(after.description.contains("steals"))
        scheduler.shutdown()
    }
}
