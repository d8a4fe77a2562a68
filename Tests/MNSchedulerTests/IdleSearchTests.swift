// The idle search (SchedulerProtocols.md, "The idle search"): a worker that ran a stream
// of turns searches on before it parks; one woken for a single unit parks at once. The
// counts come from the workers' metrics, so nothing here depends on timing.

import MNScheduler
import Synchronization
import Testing
import TestSupport

@Suite("Idle search")
struct IdleSearchTests {
    static func scheduler(idleSearchMicroseconds: Int) throws -> Scheduler {
        try Scheduler(configuration: SchedulerConfiguration(
            workers: 1, spinCount: 0, idleSearchMicroseconds: idleSearchMicroseconds, pinWorkers: false,
            blockingThresholdMilliseconds: 0, readsEnvironment: false))
    }

    /// Schedules `units` from one turn on the worker: they all queue locally, so the
    /// worker runs them back to back, one tick each.
    static func runStream(_ units: [MailboxUnit], on scheduler: Scheduler) -> Bool {
        scheduler.schedule(ClosureUnit { _, _ in
            for unit in units { unit.send(via: scheduler) }
            return .idle
        })
        return waitUntil { units.allSatisfy { $0.processed.load(ordering: .sequentiallyConsistent) == 1 } }
    }

    @Test("a worker woken for one unit parks at once; after a stream it searches on, then parks")
    func streamThenSearch() throws {
        let scheduler = try Self.scheduler(idleSearchMicroseconds: 200)
        defer { scheduler.shutdown() }
        #expect(waitUntil { scheduler.metrics.parks >= 1 }, "idle from its start, without an idle search")
        let single = MailboxUnit()
        var parks = scheduler.metrics.parks
        single.send(via: scheduler)  // from outside: wakes the worker for one unit
        #expect(waitUntil { single.processed.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(waitUntil { scheduler.metrics.parks > parks })
        #expect(scheduler.metrics.idleSearches == 0, "\(scheduler.metrics.workers)")

        parks = scheduler.metrics.parks
        #expect(Self.runStream((0..<64).map { _ in MailboxUnit() }, on: scheduler))
        #expect(waitUntil { scheduler.metrics.parks > parks }, "the idle search ends in a park")
        #expect(scheduler.metrics.idleSearches == 1, "\(scheduler.metrics.workers)")
    }

    @Test("MN_IDLE_SEARCH_US 0: a worker parks after a stream without searching on")
    func zeroTurnsItOff() throws {
        let scheduler = try Self.scheduler(idleSearchMicroseconds: 0)
        defer { scheduler.shutdown() }
        #expect(waitUntil { scheduler.metrics.parks >= 1 })
        let parks = scheduler.metrics.parks
        #expect(Self.runStream((0..<64).map { _ in MailboxUnit() }, on: scheduler))
        #expect(waitUntil { scheduler.metrics.parks > parks })
        #expect(scheduler.metrics.idleSearches == 0)
    }

    @Test("a unit pushed from outside during an idle search runs without a wake-up")
    func workDuringTheSearch() throws {
        let scheduler = try Self.scheduler(idleSearchMicroseconds: 1_000_000)
        defer { scheduler.shutdown() }
        #expect(waitUntil { scheduler.metrics.parks >= 1 })
        let parks = scheduler.metrics.parks
        #expect(Self.runStream((0..<64).map { _ in MailboxUnit() }, on: scheduler))
        #expect(waitUntil { scheduler.metrics.idleSearches == 1 })
        let late = MailboxUnit()
        late.send(via: scheduler)
        #expect(waitUntil { late.processed.load(ordering: .sequentiallyConsistent) == 1 })
        // The stream's wake-up is the only one: the searcher took `late` itself. (A park
        // after a search that outlasted this check would show as a later wake.)
        #expect(scheduler.metrics.parks == parks, "\(scheduler.metrics.workers)")
    }
}
