import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MNScheduler

/// A scheduler for one test: fixed size, environment ignored, spins little so it parks fast.
package func makeScheduler(workers: Int = 2, throughput: Int = 64, spin: Int = 8, capacity: Int = 256) throws -> Scheduler {
    try Scheduler(configuration: SchedulerConfiguration(
        workers: workers, throughput: throughput, spinCount: spin, runQueueCapacity: capacity,
        pinWorkers: false, readsEnvironment: false))
}

/// Waits (yielding the CPU) until `condition` holds or `seconds` pass. Returns whether it held.
/// A generous bound: a failure means "never happened", not "was slow".
package func waitUntil(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    let deadline = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 + seconds
    var spins = 0
    while !condition() {
        spins += 1
        if spins < 1000 { sched_yield(); continue }
        usleep(100)
        clock_gettime(CLOCK_MONOTONIC, &ts)
        if Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 > deadline { return condition() }
    }
    return true
}

/// A mailbox-like unit: producers add to `pending` then schedule; a turn takes at most
/// `budget` of the pending items. An in-use flag trips if two turns ever overlap.
package final class MailboxUnit: ScheduledUnit, @unchecked Sendable {
    package let unitHeader = UnitHeader(kind: MailboxUnit.unitKind)
    package static let unitKind = UnitKind.register(MailboxUnit.self)
    package let pending = Atomic<Int>(0)
    package let processed = Atomic<Int>(0)
    package let turns = Atomic<Int>(0)
    package let inUse = Atomic<Bool>(false)
    package let overlaps = Atomic<Int>(0)
    package let maxBudgetSeen = Atomic<Int>(0)

    package init() {}

    package func send(_ n: Int = 1, via scheduler: Scheduler) {
        pending.wrappingAdd(n, ordering: .sequentiallyConsistent)
        scheduler.schedule(self)
    }

    package func runTurn(budget: Int) -> TurnOutcome {
        if inUse.exchange(true, ordering: .acquiringAndReleasing) { overlaps.wrappingAdd(1, ordering: .relaxed) }
        defer { inUse.store(false, ordering: .releasing) }
        turns.wrappingAdd(1, ordering: .relaxed)
        if budget > maxBudgetSeen.load(ordering: .relaxed) { maxBudgetSeen.store(budget, ordering: .relaxed) }
        var taken = 0
        while taken < budget {
            let p = pending.load(ordering: .sequentiallyConsistent)
            if p == 0 { break }
            let want = min(p, budget - taken)
            if pending.compareExchange(expected: p, desired: p - want, ordering: .sequentiallyConsistent).exchanged {
                taken += want
            }
        }
        processed.wrappingAdd(taken, ordering: .sequentiallyConsistent)
        return pending.load(ordering: .sequentiallyConsistent) > 0 ? .more : .idle
    }
    package func runAfterShutdown() {}
}

/// Runs `body` once per turn; counts turns.
package final class ClosureUnit: ScheduledUnit, @unchecked Sendable {
    package let unitHeader = UnitHeader(kind: ClosureUnit.unitKind)
    package static let unitKind = UnitKind.register(ClosureUnit.self)
    package let runs = Atomic<Int>(0)
    package let body: @Sendable (ClosureUnit, Int) -> TurnOutcome
    package init(_ body: @escaping @Sendable (ClosureUnit, Int) -> TurnOutcome = { _, _ in .idle }) {
        self.body = body
    }
    package func runTurn(budget: Int) -> TurnOutcome {
        let n = runs.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        return body(self, n)
    }
    /// Times the scheduler handed this unit to its after-shutdown hook instead of a turn.
    package let abandoned = Atomic<Int>(0)
    package func runAfterShutdown() {
        abandoned.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }
}

/// Starts `count` OS threads running `body(index)` and joins them.
package func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable (Int) -> Void
        let index: Int
        init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int) { self.body = body; self.index = index }
    }
    var threads: [pthread_t] = []
    for i in 0..<count {
        var t = pthread_t()
        let box = Unmanaged.passRetained(Box(body, i)).toOpaque()
        let rc = pthread_create(&t, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body(box.index)
            return nil
        }, box)
        precondition(rc == 0)
        threads.append(t)
    }
    for t in threads { pthread_join(t, nil) }
}
