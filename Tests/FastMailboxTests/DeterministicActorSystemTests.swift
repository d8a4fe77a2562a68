// The actor system on a DeterministicScheduler: what a user's test can rely on (nothing
// runs until driven, asks and their timeouts in virtual time, restart windows in virtual
// time, clear errors for what is unsupported, balanced shutdown).

import Logging
import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

/// What an ask started on the deterministic scheduler ended with.
enum AskOutcome: Sendable, Equatable {
    case reply(Int)
    case timedOut
    case recipientStopped
    case otherError(String)
}

/// Starts `ref.ask` in a task on the deterministic scheduler's task executor (so it runs
/// when the scheduler is driven, on the driving thread) and records its outcome in `probe`.
func startAsk<M: Sendable>(_ ref: ActorRef<M>, on deterministic: DeterministicScheduler, timeout: Duration,
                           tag: Int, into probe: Probe<(tag: Int, outcome: AskOutcome)>,
                           _ makeMessage: @escaping @Sendable (ActorRef<Int>) -> M) {
    Task(executorPreference: deterministic.scheduler.taskExecutor) {
        let outcome: AskOutcome
        do {
            outcome = .reply(try await ref.ask(timeout: timeout, makeMessage))
        } catch AskError.timedOut {
            outcome = .timedOut
        } catch AskError.recipientStopped {
            outcome = .recipientStopped
        } catch {
            outcome = .otherError("\(error)")
        }
        probe.record((tag, outcome))
    }
}

enum DeterministicCounterMessage: Sendable { case add(Int), get(replyTo: ActorRef<Int>), ignore(replyTo: ActorRef<Int>) }

final class DeterministicCounter: EventActor {
    var total = 0
    func receive(_ message: DeterministicCounterMessage, context: ActorContext<DeterministicCounterMessage>) {
        switch message {
        case .add(let n): total += n
        case .get(let replyTo): replyTo.tell(total)
        case .ignore: break
        }
    }
}

@Suite("ActorSystem on a DeterministicScheduler") struct DeterministicActorSystemTests {
    @Test("nothing runs until driven; runUntilQuiescent runs every turn and returns their number")
    func nothingRunsUntilDriven() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "recorder")) { (m: Int, _) in probe.record(m) }
        for i in 0..<10 { ref.tell(i) }
        #expect(probe.count == 0)
        #expect(deterministic.runnableCount == 1)
        let turns = try deterministic.runUntilQuiescent()
        #expect(turns == 11)  // the start turn, then one message per turn (throughput 1)
        #expect(probe.values == Array(0..<10))
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 10 && report.actorsNotStopped == 0)
        #expect(system.scheduler.isShutDown)
    }

    @Test("ask from a task on the scheduler's executor gets its reply when the scheduler is driven")
    func askReplies() throws {
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        for n in 1...100 { counter.tell(.add(n)) }
        let outcomes = Probe<(tag: Int, outcome: AskOutcome)>()
        startAsk(counter, on: deterministic, timeout: .seconds(1), tag: 0, into: outcomes) { .get(replyTo: $0) }
        try deterministic.runUntilQuiescent()
        #expect(outcomes.values.map(\.outcome) == [.reply(5050)])
        #expect(system.shutdown().isBalanced)
    }

    @Test("an ask times out exactly when virtual time passes its timeout, and not before")
    func askTimesOutInVirtualTime() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        let outcomes = Probe<(tag: Int, outcome: AskOutcome)>()
        startAsk(counter, on: deterministic, timeout: .seconds(2), tag: 0, into: outcomes) { .ignore(replyTo: $0) }
        try deterministic.runUntilQuiescent()
        #expect(deterministic.pendingTimerCount == 1)
        try deterministic.advanceTime(by: .milliseconds(1_999))
        try deterministic.runUntilQuiescent()
        #expect(outcomes.count == 0)
        #expect(try deterministic.advanceTime(by: .milliseconds(1)) == 1)
        try deterministic.runUntilQuiescent()
        #expect(outcomes.values.map(\.outcome) == [.timedOut])
        #expect(deterministic.now == .seconds(2))
        #expect(system.shutdown().isBalanced)
    }

    @Test("once virtual time saturates, an ask's deadline saturates too and it still times out at the next advance")
    func askTimesOutOnASaturatedClock() throws {
        let deterministic = DeterministicScheduler(seed: 12)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        try deterministic.runUntilQuiescent()
        try deterministic.advanceTime(by: .seconds(Int64.max))
        try deterministic.advanceTime(by: .seconds(Int64.max))  // already at the maximum: stays there
        let maximum = Duration(secondsComponent: Int64(UInt64.max / 1_000_000_000),
                               attosecondsComponent: Int64(UInt64.max % 1_000_000_000) * 1_000_000_000)
        #expect(deterministic.now == maximum)  // the clock's true value, not clamped to Int64 nanoseconds
        let outcomes = Probe<(tag: Int, outcome: AskOutcome)>()
        startAsk(counter, on: deterministic, timeout: .seconds(1), tag: 0, into: outcomes) { .ignore(replyTo: $0) }
        try deterministic.runUntilQuiescent()
        #expect(deterministic.pendingTimerCount == 1, "the ask armed no timer")
        #expect(try deterministic.advanceTime(by: .seconds(1)) == 1)
        try deterministic.runUntilQuiescent()
        #expect(outcomes.values.map(\.outcome) == [.timedOut])
        // Several asks made at the maximum all end, each at the next advance after it.
        for tag in 1...3 {
            startAsk(counter, on: deterministic, timeout: .milliseconds(tag), tag: tag, into: outcomes) { .ignore(replyTo: $0) }
        }
        try deterministic.runUntilQuiescent()
        try deterministic.advanceTime(by: .zero)
        try deterministic.runUntilQuiescent()
        #expect(outcomes.values.map(\.outcome) == Array(repeating: .timedOut, count: 4))
        #expect(deterministic.pendingTimerCount == 0)
        #expect(system.shutdown().isBalanced)
    }

    @Test("an ask whose deadline saturates before the clock does times out at the advance that reaches the maximum")
    func askWithASaturatedDeadlineTimesOut() throws {
        let deterministic = DeterministicScheduler(seed: 13)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        try deterministic.advanceTime(by: .nanoseconds(Int64.max))
        try deterministic.advanceTime(by: .nanoseconds(Int64.max - 1))  // 2 ns short of the maximum
        #expect(deterministic.scheduler.clock.nanoseconds() == UInt64.max - 2)
        let outcomes = Probe<(tag: Int, outcome: AskOutcome)>()
        startAsk(counter, on: deterministic, timeout: .seconds(1), tag: 0, into: outcomes) { .ignore(replyTo: $0) }
        try deterministic.runUntilQuiescent()
        #expect(deterministic.pendingTimerCount == 1)
        #expect(try deterministic.advanceTime(by: .nanoseconds(1)) == 0)  // 1 ns short: not yet
        try deterministic.runUntilQuiescent()
        #expect(outcomes.count == 0)
        #expect(try deterministic.advanceTime(by: .seconds(1)) == 1)  // reaches the maximum
        try deterministic.runUntilQuiescent()
        #expect(outcomes.values.map(\.outcome) == [.timedOut])
        #expect(system.shutdown().isBalanced)
    }

    @Test("a reply that loses the race with the timeout is a dead letter, never a second outcome")
    func lateReplyIsDeadLettered() throws {
        let deterministic = DeterministicScheduler(seed: 4)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        let outcomes = Probe<(tag: Int, outcome: AskOutcome)>()
        startAsk(counter, on: deterministic, timeout: .seconds(1), tag: 0, into: outcomes) { .get(replyTo: $0) }
        // Run the task only (it sends the request), not the counter: two runnable units,
        // the task's lane first; step until the request is queued.
        while counter.mailboxDepth == 0 { try deterministic.step() }
        try deterministic.advanceTime(by: .seconds(1))  // the timeout wins
        try deterministic.runUntilQuiescent()            // then the counter replies, late
        #expect(outcomes.values.map(\.outcome) == [.timedOut])
        #expect(system.deadLetters.countsByReason.askTimedOut == 1)
        #expect(system.shutdown().isBalanced)
    }

    @Test("supervisor restart windows run on virtual time")
    func restartWindowIsVirtual() throws {
        struct Boom: Error {}
        for (gap, expectStopped) in [(Duration.zero, true), (.seconds(11), false)] {
            let deterministic = DeterministicScheduler(seed: 5)
            let system = makeDeterministicSystem(deterministic, supervisor: .restart(maxRestarts: 2, within: .seconds(10)))
            let starts = Probe<Int>()
            let ref = try system.spawn(options: SpawnOptions(name: "fragile")) { () -> ClosureActor<Int> in
                starts.record(0)
                return ClosureActor { (_: Int, _) in throw Boom() }
            }
            for _ in 0..<3 {
                ref.tell(1)
                try deterministic.runUntilQuiescent()
                try deterministic.advanceTime(by: gap)
            }
            // Three failures: within 10 s the third exceeds 2 restarts and stops the actor;
            // 11 s apart each restart is the only one in its window.
            #expect((system.lookup("fragile", as: Int.self) == nil) == expectStopped, "gap \(gap)")
            #expect(starts.count == (expectStopped ? 3 : 4), "gap \(gap)")
            #expect(system.shutdown().isBalanced)
        }
    }

    @Test("actors that need threads of their own are refused with a clear error")
    func threadActorsAreRefused() throws {
        let deterministic = DeterministicScheduler(seed: 6)
        let system = makeDeterministicSystem(deterministic)
        #expect(throws: ActorSystemError.unsupportedOnDeterministicScheduler("spawn of a sequential body")) {
            try system.spawn { (_: Inbox<Int>) in }
        }
        #expect(throws: ActorSystemError.unsupportedOnDeterministicScheduler("spawn with placement .dedicatedThread")) {
            try system.spawn(options: SpawnOptions(placement: .dedicatedThread)) { DeterministicCounter() }
        }
        #expect(throws: ActorSystemError.unsupportedOnDeterministicScheduler("spawn with placement .mainThread")) {
            try system.spawn(options: SpawnOptions(placement: .mainThread)) { DeterministicCounter() }
        }
        #expect("\(ActorSystemError.unsupportedOnDeterministicScheduler("spawn of a sequential body"))".contains("deterministic scheduler"))
        #expect(system.shutdown().isBalanced)
    }

    @Test("shutdown mid-traffic drives the remaining turns on the calling thread and balances the books")
    func shutdownMidTraffic() throws {
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let refs = try (0..<4).map { i in try system.spawn(options: SpawnOptions(name: "a\(i)", mailboxCapacity: 4)) { (m: Int, _) in probe.record(m) } }
        for i in 0..<50 { refs[i % 4].tell(i) }
        for _ in 0..<20 { try deterministic.step() }
        let report = system.shutdown()
        #expect(report.isBalanced)
        #expect(report.sent == 50 && report.delivered == 50)  // accepted before shutdown: drained
        #expect(report.actorsNotStopped == 0 && report.left == 0 && report.workersNotStopped == 0)
        refs[0].tell(99)  // after shutdown: a dead letter, at once, on this thread
        #expect(system.deadLetters.count == 1)
        #expect(try deterministic.runUntilQuiescent() == 0)
    }

    @Test("shutdown called from inside a turn returns a report (the caller counted as not stopped) instead of trapping or hanging")
    func shutdownFromATurn() throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let reports = Probe<ShutdownReport>()
        let other = try system.spawn(options: SpawnOptions(name: "other")) { (_: Int, _) in }
        let caller = try system.spawn(options: SpawnOptions(name: "caller")) { (_: Int, context: ActorContext<Int>) in
            reports.record(context.system.shutdown())
        }
        try deterministic.runUntilQuiescent()
        other.tell(1)
        caller.tell(1)
        try deterministic.runUntilQuiescent()
        let report = try #require(reports.values.first)
        #expect(report.actorsNotStopped >= 1 && report.actorsNotStoppedNames.contains("caller"), "\(report)")
        #expect(system.scheduler.isShutDown)
        #expect(system.shutdown() == report)  // later calls return the first report
    }

    @Test("await ref.terminated from a task on the scheduler's executor, and gracefulShutdown, work when driven")
    func terminatedAndGracefulShutdown() async throws {
        let deterministic = DeterministicScheduler(seed: 10)
        let system = makeDeterministicSystem(deterministic)
        let ref = try system.spawn(options: SpawnOptions(name: "short-lived")) { (_: Int, context: ActorContext<Int>) in context.stop() }
        let termination = try await runDriven(deterministic) {
            ref.tell(1)
            return await ref.terminated
        }
        #expect(termination == Terminated(id: ref.id, name: "short-lived", reason: .stopped))
        let idle = try system.spawn(options: SpawnOptions(name: "idle")) { (_: Int, _) in }
        idle.tell(1)
        let report = await system.gracefulShutdown()  // drives on a thread of its own
        #expect(report.isBalanced && report.delivered == 2 && report.actorsNotStopped == 0, "\(report)")
    }

    @Test("driving from inside a turn is an error, not a trap")
    func driveFromATurnThrows() throws {
        let deterministic = DeterministicScheduler(seed: 8)
        let system = makeDeterministicSystem(deterministic)
        let errors = Probe<DeterministicSchedulerError>()
        let ref = try system.spawn { (_: Int, _) in
            do throws(DeterministicSchedulerError) { try deterministic.runUntilQuiescent() } catch { errors.record(error) }
        }
        ref.tell(1)
        try deterministic.runUntilQuiescent()
        #expect(errors.values == [.alreadyDriving(seed: 8)])
        #expect(system.shutdown().isBalanced)
    }
}

/// DeterministicTesting.md's example, verbatim but for the names (keep the two in step).
@Test("the DeterministicTesting article's example passes", arguments: 0..<20 as Range<UInt64>)
func deterministicTestingArticleExample(seed: UInt64) async throws {
    let scheduler = DeterministicScheduler(seed: seed)
    let system = ActorSystem(scheduler: scheduler)
    let counter = try system.spawn { DeterministicCounter() }
    for n in 1...100 { counter.tell(.add(n)) }

    // An ask runs in a task on the scheduler's executor, so it runs when the test drives.
    let total = Task(executorPreference: scheduler.taskExecutor) {
        try await counter.ask(timeout: .seconds(1)) { .get(replyTo: $0) }
    }
    try scheduler.runUntilQuiescent()           // every turn, on this thread
    #expect(try await total.value == 5050, "seed \(seed)")  // done already: no waiting

    let report = system.shutdown()              // drives the remaining turns
    #expect(report.isBalanced, "seed \(seed)")
}

/// The body of a driven task did not finish when the scheduler went quiescent.
struct DrivenTaskUnfinished: Error, CustomStringConvertible {
    var description: String { "the task on the deterministic scheduler is still waiting (for a timer? advance time)" }
}

/// Runs `body` as a task on `scheduler`'s executor, drives the scheduler until quiescent
/// and returns the task's result — finished by then, so nothing waits. Throws
/// `DrivenTaskUnfinished` instead of hanging when the task still waits for something.
func runDriven<T: Sendable>(_ scheduler: DeterministicScheduler,
                            _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let finished = Probe<Bool>()
    let task = Task(executorPreference: scheduler.taskExecutor) {
        defer { finished.record(true) }
        return try await body()
    }
    try scheduler.runUntilQuiescent()
    guard finished.count == 1 else { throw DrivenTaskUnfinished() }
    return try await task.value
}
