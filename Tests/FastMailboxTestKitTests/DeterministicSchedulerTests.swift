import Dispatch
import Synchronization
import Testing
import FastMailboxTestKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

@Suite struct DeterministicSchedulerTests {
    /// A unit that records its name in a shared log on every turn and takes one pending item.
    final class NamedUnit: ScheduledUnit, @unchecked Sendable {
        let unitHeader = UnitHeader(kind: NamedUnit.unitKind)
        static let unitKind = UnitKind.register(NamedUnit.self)
        let name: String
        let log: Lock<[String]>
        let pending = Atomic<Int>(0)
        let afterShutdown = Atomic<Int>(0)
        var onTurn: (() -> Void)?
        init(_ name: String, log: Lock<[String]>) {
            self.name = name
            self.log = log
        }
        func runTurn(budget: Int) -> TurnOutcome {
            log.withLock { $0.append(name) }
            onTurn?()
            let left = pending.wrappingSubtract(1, ordering: .relaxed).newValue
            return left > 0 ? .more : .idle
        }
        func runAfterShutdown() {
            afterShutdown.wrappingAdd(1, ordering: .relaxed)
            pending.store(0, ordering: .relaxed)
        }
        func send(_ n: Int, via scheduler: Scheduler) {
            pending.wrappingAdd(n, ordering: .relaxed)
            scheduler.schedule(self)
        }
    }

    /// The turn order of 6 units with 5 items each under `seed`.
    func turnOrder(seed: UInt64) throws -> [String] {
        let deterministic = DeterministicScheduler(seed: seed)
        let log = Lock<[String]>([])
        let units = (0..<6).map { NamedUnit("u\($0)", log: log) }
        for unit in units { unit.send(5, via: deterministic.scheduler) }
        #expect(try deterministic.runUntilQuiescent() == 30)
        return log.withLock { $0 }
    }

    /// D3: the same seed replays the same interleaving; other seeds give others.
    @Test("D3: the same seed replays the same interleaving; other seeds give others")
    func sameSeedReplaysTheSameOrderAndOtherSeedsDiffer() throws {
        let first = try turnOrder(seed: 42)
        #expect(first.count == 30)
        #expect(try turnOrder(seed: 42) == first)
        let others = try Set((1...8).map { try turnOrder(seed: 1_000 + $0) })
        #expect(others.count > 1, "different seeds all gave one order")
        #expect(!(others.allSatisfy { $0 == first }))
    }

    @Test("nothing runs until driven; step runs one turn; a unit is queued once (R1)")
    func nothingRunsUntilDrivenAndStepRunsOneTurn() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        #expect(deterministic.scheduler.workerCount == 0)
        #expect(deterministic.scheduler.isDeterministic)
        let log = Lock<[String]>([])
        let a = NamedUnit("a", log: log), b = NamedUnit("b", log: log)
        a.send(2, via: deterministic.scheduler)
        b.send(1, via: deterministic.scheduler)
        a.send(0, via: deterministic.scheduler)  // already scheduled: R1, no second entry
        #expect(deterministic.runnableCount == 2)
        #expect(log.withLock { $0 } == [])
        #expect(try deterministic.step())
        #expect(log.withLock { $0.count } == 1)
        #expect(deterministic.turnsRun == 1)
        #expect(try deterministic.runUntilQuiescent() == 2)
        #expect(deterministic.isQuiescent)
        #expect(!(try deterministic.step()))
        #expect(log.withLock { $0.sorted() } == ["a", "a", "b"])
    }

    /// The bound: a unit that always has more work is reported, with the seed, and stays
    /// runnable.
    @Test("runUntilQuiescent reports the bound with the seed; the unit stays runnable")
    func runUntilQuiescentThrowsWhenTheBoundIsReached() throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let log = Lock<[String]>([])
        let forever = NamedUnit("forever", log: log)
        forever.send(Int.max / 2, via: deterministic.scheduler)
        #expect(throws: DeterministicSchedulerError.notQuiescent(turns: 50, runnable: 1, seed: 9)) {
            try deterministic.runUntilQuiescent(maxTurns: 50)
        }
        #expect("\(DeterministicSchedulerError.notQuiescent(turns: 50, runnable: 1, seed: 9))".contains("seed 9"))
        #expect(log.withLock { $0.count } == 50)
        #expect(deterministic.runnableCount == 1)
        #expect(deterministic.scheduler.shutdown().count == 1)
        #expect(forever.afterShutdown.load(ordering: .relaxed) == 1)
    }

    /// D2: driving from inside a turn, or from another thread while a drive is on, throws
    /// instead of trapping or deadlocking.
    @Test("D2: a drive from inside a turn or from another thread throws alreadyDriving")
    func secondDriveThrowsAlreadyDriving() throws {
        let deterministic = DeterministicScheduler(seed: 5)
        let log = Lock<[String]>([])
        let unit = NamedUnit("u", log: log)
        let errors = Lock<[DeterministicSchedulerError]>([])
        unit.onTurn = {
            do throws(DeterministicSchedulerError) { try deterministic.step() } catch { errors.withLock { $0.append(error) } }
            do throws(DeterministicSchedulerError) { try deterministic.advanceTime(by: .seconds(1)) } catch { errors.withLock { $0.append(error) } }
            // Another thread while this one drives.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                do throws(DeterministicSchedulerError) { try deterministic.runUntilQuiescent() } catch { errors.withLock { $0.append(error) } }
                done.signal()
            }
            done.wait()
        }
        unit.send(1, via: deterministic.scheduler)
        try deterministic.runUntilQuiescent()
        #expect(errors.withLock { $0 } == Array(repeating: .alreadyDriving(seed: 5), count: 3))
        #expect(deterministic.now == .zero)  // the refused advance did nothing
        #expect(try deterministic.runUntilQuiescent() == 0)  // the guard was released
    }

    /// V4: virtual time saturates at UInt64.max nanoseconds, `now` reports it exactly, and a
    /// deadline that saturated to it is still reached: its timer fires at the next advance.
    @Test("V4: once virtual time saturates, a deadline armed then fires at the next advance; now is exact")
    func saturatedClockStillFiresTimers() throws {
        let deterministic = DeterministicScheduler(seed: 14)
        try deterministic.advanceTime(by: .seconds(Int64.max))
        try deterministic.advanceTime(by: .seconds(Int64.max))
        let clock = deterministic.scheduler.clock
        #expect(clock.nanoseconds() == .max)
        #expect(deterministic.now == .seconds(18_446_744_073) + .nanoseconds(709_551_615))
        #expect(deterministic.now > .nanoseconds(Int64.max))
        let deadline = clock.deadline(after: .seconds(1))
        #expect(deadline == .max)  // saturated: the clock is already there
        let fired = Lock<Int>(0)
        deterministic.engine.clock.addTimer(at: deadline) { fired.withLock { $0 += 1 } }
        #expect(deterministic.pendingTimerCount == 1)
        #expect(try deterministic.advanceTime(by: .seconds(1)) == 1)
        #expect(fired.withLock { $0 } == 1)
        #expect(deterministic.pendingTimerCount == 0)
    }

    /// Shutdown: runnable units go through runAfterShutdown; later schedules too (D4); a
    /// second shutdown returns nothing.
    @Test("D4: shutdown hands queued and later work to the after-shutdown hook")
    func shutdownHandsQueuedAndLateWorkToTheAfterShutdownHook() throws {
        let deterministic = DeterministicScheduler(seed: 11)
        let log = Lock<[String]>([])
        let a = NamedUnit("a", log: log), b = NamedUnit("b", log: log)
        a.send(3, via: deterministic.scheduler)
        b.send(1, via: deterministic.scheduler)
        let handedBack = deterministic.scheduler.shutdown()
        #expect(Set(handedBack.map { ObjectIdentifier($0) }) == [ObjectIdentifier(a), ObjectIdentifier(b)])
        #expect(deterministic.scheduler.isShutDown)
        #expect(a.afterShutdown.load(ordering: .relaxed) == 1)
        #expect(deterministic.runnableCount == 0)
        a.send(1, via: deterministic.scheduler)
        #expect(a.afterShutdown.load(ordering: .relaxed) == 2)
        #expect(deterministic.scheduler.shutdown().count == 0)
        #expect(deterministic.scheduler.workersStillRunning == 0)
        #expect(!(try deterministic.step()))
        #expect(log.withLock { $0 } == [])
    }

    /// A turn that re-queues itself after a shutdown it caused goes to the hook (D4).
    @Test("D4: a unit re-queued by a turn after a shutdown it caused goes to the hook")
    func unitRequeuedAfterShutdownGoesToTheHook() throws {
        let deterministic = DeterministicScheduler(seed: 12)
        let log = Lock<[String]>([])
        let unit = NamedUnit("u", log: log)
        unit.onTurn = { deterministic.scheduler.shutdown() }
        unit.send(5, via: deterministic.scheduler)
        #expect(try deterministic.runUntilQuiescent() == 1)
        #expect(unit.afterShutdown.load(ordering: .relaxed) == 1)
    }

    /// Tasks on the scheduler's task executor and MNSerialExecutor jobs run only when
    /// driven, on the driving thread.
    @Test("tasks on the task executor run only when driven, on the driving thread")
    func tasksAndSerialExecutorsRunWhenDriven() throws {
        let deterministic = DeterministicScheduler(seed: 13)
        let done = Lock<[Int]>([])
        let driver = pthread_self()
        let onDriver = Lock<Bool>(true)
        for i in 0..<4 {
            Task(executorPreference: deterministic.scheduler.taskExecutor) {
                if pthread_equal(pthread_self(), driver) == 0 { onDriver.withLock { $0 = false } }
                done.withLock { $0.append(i) }
            }
        }
        #expect(done.withLock { $0 } == [])
        try deterministic.runUntilQuiescent()
        #expect(done.withLock { $0.sorted() } == [0, 1, 2, 3])
        #expect(onDriver.withLock { $0 })
        deterministic.scheduler.shutdown()
    }

    /// Throughput is the budget handed to each turn, clamped to the configuration's range.
    @Test("throughput is each turn's budget, clamped to the configuration's range")
    func throughputIsTheTurnBudget() throws {
        for (asked, expected) in [(1, 1), (7, 7), (0, 1), (Int.max, SchedulerConfiguration.throughputRange.upperBound)] {
            let deterministic = DeterministicScheduler(seed: 1, throughput: asked)
            let budget = Lock<Int>(0)
            final class BudgetUnit: ScheduledUnit, @unchecked Sendable {
                let unitHeader = UnitHeader(kind: BudgetUnit.unitKind)
                static let unitKind = UnitKind.register(BudgetUnit.self)
                let seen: Lock<Int>
                init(_ seen: Lock<Int>) { self.seen = seen }
                func runTurn(budget: Int) -> TurnOutcome { seen.withLock { $0 = budget }; return .idle }
                func runAfterShutdown() {}
            }
            deterministic.scheduler.schedule(BudgetUnit(budget))
            try deterministic.runUntilQuiescent()
            #expect(budget.withLock { $0 } == expected)
        }
    }
}
