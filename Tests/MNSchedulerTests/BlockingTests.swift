import Testing
import Foundation
import Synchronization
@testable import MNScheduler
import TestSupport

/// A gate the code under test waits on until the test opens it.
final class Gate: Sendable {
    private let opened = DispatchSemaphore(value: 0)
    private let arrivals = DispatchSemaphore(value: 0)
    func pass() { arrivals.signal(); opened.wait() }
    func waitForArrivals(_ n: Int) -> Bool {
        (0..<n).allSatisfy { _ in arrivals.wait(timeout: .now() + 20) == .success }
    }
    func open(_ n: Int = 1) { for _ in 0..<n { opened.signal() } }
}

/// The names of this process's threads (/proc/self/task/*/comm).
private func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
}

@Suite("Blocking code on the pool", .serialized) struct BlockingTests {
    @Test("two units blocking inside blocking {} on both workers do not stop a third from running 100,000 items")
    func explicitBlockingKeepsThePoolRunning() throws {
        let scheduler = try makeScheduler(workers: 2)
        let gate = Gate()
        let blockers = (0..<2).map { _ in ClosureUnit { _, _ in blocking { gate.pass() }; return .idle } }
        for unit in blockers { scheduler.schedule(unit) }
        #expect(gate.waitForArrivals(2))  // both workers are now inside blocking {}
        #expect(scheduler.blockingMetrics.workersInBlockingSections == 2)
        let worker = MailboxUnit()
        worker.send(100_000, via: scheduler)
        #expect(waitUntil { worker.processed.load(ordering: .sequentiallyConsistent) == 100_000 },
                "the third unit did not run while both workers blocked")
        #expect(worker.overlaps.load(ordering: .relaxed) == 0)
        #expect(scheduler.blockingMetrics.spareThreadsStarted >= 1)
        gate.open(2)
        #expect(waitUntil { scheduler.blockingMetrics.spareThreadsRunning == 0 }, "spare threads did not retire")
        scheduler.shutdown()
    }

    @Test("without blocking {}, the monitor detects both workers stuck in a turn and another thread runs the queued work")
    func detectionKeepsThePoolRunning() throws {
        let scheduler = try makeScheduler(workers: 2)
        let gate = Gate()
        let blockers = (0..<2).map { _ in ClosureUnit { _, _ in gate.pass(); return .idle } }
        for unit in blockers { scheduler.schedule(unit) }
        #expect(gate.waitForArrivals(2))
        let worker = MailboxUnit()
        worker.send(100_000, via: scheduler)
        #expect(waitUntil { worker.processed.load(ordering: .sequentiallyConsistent) == 100_000 },
                "the queued work waited for the blocked turns")
        // The queued work may finish on a spare before the monitor's next look finds the
        // second stuck worker; both stay stuck until the gate opens, so it comes.
        #expect(waitUntil { scheduler.blockingMetrics.workersStalled == 2 },
                "\(scheduler.blockingMetrics.workersStalled) of the 2 stuck workers detected")
        #expect(scheduler.blockingMetrics.longestTurn >= .milliseconds(10))
        gate.open(2)
        #expect(waitUntil { scheduler.blockingMetrics.spareThreadsRunning == 0 })
        scheduler.shutdown()
    }

    @Test("a unit that calls blocking {} on every item is never run on two threads at once")
    func blockingKeepsExclusivity() throws {
        let scheduler = try makeScheduler(workers: 2)
        final class BlockingUnit: ScheduledUnit, @unchecked Sendable {
            let unitHeader = UnitHeader(kind: BlockingUnit.unitKind)
            static let unitKind = UnitKind.register(BlockingUnit.self)
            let pending = Atomic<Int>(0)
            let processed = Atomic<Int>(0)
            let inUse = Atomic<Bool>(false)
            let overlaps = Atomic<Int>(0)
            func runTurn(budget: Int) -> TurnOutcome {
                if inUse.exchange(true, ordering: .acquiringAndReleasing) { overlaps.wrappingAdd(1, ordering: .relaxed) }
                defer { inUse.store(false, ordering: .releasing) }
                var done = 0
                while done < budget, pending.load(ordering: .sequentiallyConsistent) > 0 {
                    pending.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                    blocking { usleep(50) }
                    processed.wrappingAdd(1, ordering: .sequentiallyConsistent)
                    done += 1
                }
                return pending.load(ordering: .sequentiallyConsistent) > 0 ? .more : .idle
            }
            func runAfterShutdown() {}
        }
        let units = (0..<4).map { _ in BlockingUnit() }
        for round in 0..<50 {
            for unit in units {
                unit.pending.wrappingAdd(1 + round % 3, ordering: .sequentiallyConsistent)
                scheduler.schedule(unit)
            }
        }
        let expected = (0..<50).reduce(0) { $0 + 1 + $1 % 3 }
        #expect(waitUntil { units.allSatisfy { $0.processed.load(ordering: .sequentiallyConsistent) == expected } })
        #expect(units.allSatisfy { $0.overlaps.load(ordering: .relaxed) == 0 })
        scheduler.shutdown()
    }

    @Test("a unit told from inside a turn that then runs long is run by another worker within 200 ms, not after the turn")
    func nextSlotIsNotStarved() throws {
        let scheduler = try makeScheduler(workers: 2)
        let toldAt = Atomic<UInt64>(0)
        let ranAt = Atomic<UInt64>(0)
        let told = ClosureUnit { _, _ in ranAt.store(monotonicNanoseconds(), ordering: .sequentiallyConsistent); return .idle }
        let long = ClosureUnit { _, _ in
            toldAt.store(monotonicNanoseconds(), ordering: .sequentiallyConsistent)
            scheduler.schedule(told)  // into this worker's next slot
            let end = monotonicNanoseconds() + 1_000_000_000
            while monotonicNanoseconds() < end, ranAt.load(ordering: .relaxed) == 0 {}  // busy, not blocking {}
            return .idle
        }
        scheduler.schedule(long)
        #expect(waitUntil { ranAt.load(ordering: .sequentiallyConsistent) != 0 })
        let waited = Duration.nanoseconds(Int64(ranAt.load(ordering: .sequentiallyConsistent) - toldAt.load(ordering: .sequentiallyConsistent)))
        #expect(waited < .milliseconds(200), "the told unit waited \(waited) (the turn ran 1 s)")
        scheduler.shutdown()
    }

    @Test("work from outside the pool is served within 100 ms while every worker runs a unit that keeps re-scheduling itself")
    func outsideWorkIsNotStarved() throws {
        let scheduler = try makeScheduler(workers: 2)
        let stop = Atomic<Bool>(false)
        let spinners = (0..<2).map { _ in
            ClosureUnit { _, _ in
                for _ in 0..<200 { _ = monotonicNanoseconds() }
                return stop.load(ordering: .relaxed) ? .idle : .more
            }
        }
        for unit in spinners { scheduler.schedule(unit) }
        var waits: [Duration] = []
        for _ in 0..<20 {
            let ranAt = Atomic<UInt64>(0)
            let outside = ClosureUnit { _, _ in ranAt.store(monotonicNanoseconds(), ordering: .sequentiallyConsistent); return .idle }
            let start = monotonicNanoseconds()
            scheduler.schedule(outside)
            #expect(waitUntil { ranAt.load(ordering: .sequentiallyConsistent) != 0 })
            waits.append(.nanoseconds(Int64(ranAt.load(ordering: .sequentiallyConsistent) - start)))
        }
        stop.store(true, ordering: .relaxed)
        let median = waits.sorted()[waits.count / 2]
        #expect(median < .milliseconds(100), "median wait \(median), all: \(waits)")
        scheduler.shutdown()
    }

    @Test("worker threads are named mn-worker-N and the monitor mn-monitor")
    func threadsAreNamed() throws {
        let scheduler = try makeScheduler(workers: 2)
        // Each thread names itself once it starts: wait for all three (the monitor may be
        // the last to run on a busy machine).
        #expect(waitUntil { Set(["mn-worker-0", "mn-worker-1", "mn-monitor"]).isSubset(of: threadNames()) })
        let names = threadNames()
        #expect(names.contains("mn-worker-0") && names.contains("mn-monitor"), "\(names)")
        scheduler.shutdown()
    }

    @Test("bad blocking settings are refused naming the variable, the value and the range")
    func badBlockingSettingsAreRefused() {
        let cpus = CPUAvailability(affinityCPUs: 2, cgroupQuotaCPUs: nil, onlineCPUs: 2)
        for (variable, value) in [("MN_BLOCKING_THRESHOLD_MS", "-1"), ("MN_BLOCKING_THRESHOLD_MS", "ten"),
                                  ("MN_MAX_BLOCKING_THREADS", "5000"), ("MN_MAX_BLOCKING_THREADS", "")] {
            do {
                _ = try SchedulerConfiguration().resolved(environment: [variable: value], cpus: cpus)
                Issue.record("\(variable)=\(value) was accepted")
            } catch {
                #expect(error.variable == variable && error.value == value, "\(error)")
                #expect(error.description.contains(variable))
            }
        }
        let resolved = try? SchedulerConfiguration().resolved(
            environment: ["MN_BLOCKING_THRESHOLD_MS": "0", "MN_MAX_BLOCKING_THREADS": "3"], cpus: cpus)
        #expect(resolved?.blockingThresholdMilliseconds == 0 && resolved?.maxBlockingThreads == 3)
    }
}
