import Testing
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

// An ask made from a task on the pool (scheduler.task) that times out while the pool is
// saturated. The timer fires on time; what could delay the asker is the resumed task
// waiting behind the pool's queued units. Tasks resumed from outside have a queue of their
// own that workers serve every other turn (Worker, step 0), so the wait is a turn or two.
// Turns are counted, not timed.

/// Turns run by every Spinner, and the switch that lets them go idle.
private final class SpinCounter: Sendable {
    let turns = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
}

/// Always runnable until told to stop: each turn counts itself and asks to run again, so the
/// pool always has `count` units queued, like a pool under a flood of tells.
private final class Spinner: ScheduledUnit, @unchecked Sendable {
    fileprivate let unitHeader = UnitHeader(kind: Spinner.unitKind)
    static let unitKind = UnitKind.register(Spinner.self)
    let counter: SpinCounter
    init(_ counter: SpinCounter) {
        self.counter = counter
    }

    func runTurn(budget: Int) -> TurnOutcome {
        counter.turns.wrappingAdd(1, ordering: .relaxed)
        return counter.stop.load(ordering: .relaxed) ? .idle : .more
    }
    fileprivate func runAfterShutdown() {}
}

@Suite("Ask timeout resume", .serialized) struct AskTimeoutResumeTests {
    /// Spinners: more than a local run queue holds (256), so some always wait in the
    /// injection queue, as outside tells keep it filled in the soak.
    static let spinners = 400

    @Test("a timed-out ask from a task on a saturated pool resumes before other queued units get more turns")
    func saturatedPool() async throws {
        let system = try makeSystem(workers: 1)
        let counter = SpinCounter()
        let silent = try system.spawn(options: SpawnOptions(name: "silent")) { (_: ActorRef<Int>, _) in }  // never replies
        // Turns counted once the timer has resumed the ask's continuation: from then on the
        // asker's task is queued on the pool and only waits for a worker.
        let turnsAtTimeout = Atomic<Int>(-1)
        system.askTimer.didTimeOut.withLock { hook in
            hook = { _ in turnsAtTimeout.store(counter.turns.load(ordering: .relaxed), ordering: .relaxed) }
        }
        let units = (0..<Self.spinners).map { _ in Spinner(counter) }
        for unit in units { system.scheduler.schedule(unit) }

        let turnsAtResume = await system.scheduler.task { () -> Int in
            do {
                _ = try await silent.ask(timeout: .milliseconds(1)) { $0 }
                return -1
            } catch {
                return counter.turns.load(ordering: .relaxed)
            }
        }.value
        counter.stop.store(true, ordering: .relaxed)
        #expect(turnsAtResume >= 0, "the silent actor cannot have replied")
        let waited = turnsAtResume - turnsAtTimeout.load(ordering: .relaxed)
        print("ask timeout resume: the resumed asker waited \(waited) turns of other units (\(Self.spinners) queued, 1 worker)")
        // Fair service for a resumed task: the turn in progress when the timer fired, not
        // a share of the queue behind it (the injection queue, which a busy worker polls
        // only now and then, would give thousands of turns here).
        #expect(waited <= 4, "the resumed asker waited \(waited) turns of other units")
        _ = system.shutdown()
    }
}
