// context.pipeToSelf and context.ask on the DeterministicScheduler: async outcomes arrive
// as ordinary messages handled in turn; an outcome for an actor that stopped meanwhile is
// a dead letter; an ask's reply, timeout and refusal each arrive once.

import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

struct PipeFailure: Error, Equatable {}

enum PipeMessage: Sendable {
    case start(shouldFail: Bool, stopAfter: Bool)
    case outcome(Result<Int, PipeFailure>)
    case askCounter(ActorRef<DeterministicCounterMessage>, ignore: Bool, timeout: Duration)
    case replied(Result<Int, AskError>)
}

/// Starts async work and records what comes back; `inTurn` proves the outcome was handled
/// by `receive` (the actor's own state, read and written only in its turns).
final class PipeActor: EventActor {
    let outcomes: Probe<Result<Int, PipeFailure>>
    let replies: Probe<Result<Int, AskError>>
    var handled = 0
    let handledCounts: Probe<Int>
    init(outcomes: Probe<Result<Int, PipeFailure>>, replies: Probe<Result<Int, AskError>>, handledCounts: Probe<Int>) {
        self.outcomes = outcomes
        self.replies = replies
        self.handledCounts = handledCounts
    }

    func receive(_ message: PipeMessage, context: ActorContext<PipeMessage>) {
        handled += 1
        switch message {
        case .start(let shouldFail, let stopAfter):
            context.pipeToSelf({ () async throws -> Int in
                await Task.yield()  // a real suspension
                if shouldFail { throw PipeFailure() }
                return 42
            }, transform: { result in
                .outcome(result.mapError { $0 as? PipeFailure ?? PipeFailure() })
            })
            if stopAfter { context.stop() }
        case .outcome(let result):
            outcomes.record(result)
            handledCounts.record(handled)
        case .askCounter(let counter, let ignore, let timeout):
            context.ask(counter, timeout: timeout) { replyTo in
                ignore ? .ignore(replyTo: replyTo) : .get(replyTo: replyTo)
            } transform: { (result: Result<Int, any Error>) in
                .replied(result.mapError { $0 as! AskError })
            }
        case .replied(let result):
            replies.record(result)
            handledCounts.record(handled)
        }
    }
}

@Suite("pipeToSelf and context.ask") struct PipeToSelfTests {
    struct Fixture {
        let deterministic: DeterministicScheduler
        let system: ActorSystem
        let actor: ActorRef<PipeMessage>
        let outcomes: Probe<Result<Int, PipeFailure>>
        let replies: Probe<Result<Int, AskError>>
        let handledCounts: Probe<Int>
    }

    func makeFixture(seed: UInt64 = 1) throws -> Fixture {
        let deterministic = DeterministicScheduler(seed: seed)
        let system = makeDeterministicSystem(deterministic)
        let outcomes = Probe<Result<Int, PipeFailure>>()
        let replies = Probe<Result<Int, AskError>>()
        let handledCounts = Probe<Int>()
        let actor = try system.spawn(options: .named("piper")) {
            PipeActor(outcomes: outcomes, replies: replies, handledCounts: handledCounts)
        }
        return Fixture(deterministic: deterministic, system: system, actor: actor,
                       outcomes: outcomes, replies: replies, handledCounts: handledCounts)
    }

    @Test("a success and a failure each arrive once, as messages handled in turn")
    func successAndFailure() throws {
        for seed: UInt64 in 1...5 {
            let f = try makeFixture(seed: seed)
            f.actor.tell(.start(shouldFail: false, stopAfter: false))
            f.actor.tell(.start(shouldFail: true, stopAfter: false))
            try f.deterministic.runUntilQuiescent()
            let outcomes = f.outcomes.values
            #expect(outcomes.count == 2, "seed \(seed)")
            #expect(outcomes.contains { (try? $0.get()) == 42 }, "seed \(seed)")
            #expect(outcomes.contains { if case .failure(PipeFailure()) = $0 { true } else { false } }, "seed \(seed)")
            // Handled by receive, after both starts: the actor's own count saw 3, then 4.
            #expect(f.handledCounts.values == [3, 4], "seed \(seed)")
            let report = f.system.shutdown()
            #expect(report.isBalanced && report.delivered == 4 && report.deadLettered == 0, "seed \(seed)")
        }
    }

    @Test("an outcome for an actor that stopped meanwhile is a dead letter, never a crash")
    func afterStopIsDeadLetter() throws {
        let f = try makeFixture()
        f.actor.tell(.start(shouldFail: false, stopAfter: true))  // stops in the same turn
        try f.deterministic.runUntilQuiescent()
        #expect(f.outcomes.count == 0)
        #expect(f.system.deadLetters.countsByReason.recipientStopped == 1)
        let report = f.system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 1)
    }

    @Test("context.ask: the reply arrives as a message through transform")
    func askReply() throws {
        let f = try makeFixture()
        let counter = try f.system.spawn { DeterministicCounter() }
        counter.tell(.add(5))
        f.actor.tell(.askCounter(counter, ignore: false, timeout: .seconds(1)))
        counter.tell(.add(100))  // after the request, from another sender: may or may not count
        try f.deterministic.runUntilQuiescent()
        let replies = f.replies.values
        #expect(replies.count == 1)
        #expect([5, 105].contains(try replies.first?.get() ?? -1))
        #expect(f.system.shutdown().isBalanced)
    }

    @Test("context.ask: the request keeps its place among the asker's sends")
    func askOrder() throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { DeterministicCounter() }
        let replies = Probe<Int>()
        let asker = try system.spawn { (message: Int, context: ActorContext<Int>) in
            if message == 0 {
                counter.tell(.add(1))
                context.ask(counter, timeout: .seconds(1), { .get(replyTo: $0) }, transform: { (try? $0.get()) ?? -1 })
                counter.tell(.add(10))
            } else {
                replies.record(message)
            }
        }
        asker.tell(0)
        try deterministic.runUntilQuiescent()
        #expect(replies.values == [1])  // after the first add, before the second
        #expect(system.shutdown().isBalanced)
    }

    @Test("context.ask: a timeout arrives as a failure at the virtual deadline, a late reply is a dead letter")
    func askTimeout() throws {
        let f = try makeFixture()
        let counter = try f.system.spawn { DeterministicCounter() }
        f.actor.tell(.askCounter(counter, ignore: true, timeout: .seconds(2)))
        try f.deterministic.runUntilQuiescent()
        try f.deterministic.advanceTime(by: .milliseconds(1_999))
        try f.deterministic.runUntilQuiescent()
        #expect(f.replies.count == 0)
        try f.deterministic.advanceTime(by: .milliseconds(1))
        try f.deterministic.runUntilQuiescent()
        let replies = f.replies.values
        #expect(replies.count == 1)
        if case .failure(.timedOut(_, _, let after)) = replies.first { #expect(after == .seconds(2)) } else {
            Issue.record("expected a timeout, got \(replies)")
        }
        #expect(f.system.shutdown().isBalanced)
    }

    @Test("context.ask to a stopped actor fails at once with recipientStopped")
    func askStopped() throws {
        let f = try makeFixture()
        let counter = try f.system.spawn { DeterministicCounter() }
        counter.stop()
        try f.deterministic.runUntilQuiescent()
        f.actor.tell(.askCounter(counter, ignore: false, timeout: .seconds(2)))
        try f.deterministic.runUntilQuiescent()
        let replies = f.replies.values
        #expect(replies.count == 1)
        if case .failure(.recipientStopped) = replies.first {} else { Issue.record("expected recipientStopped, got \(replies)") }
        #expect(f.system.askTimer.pendingCount == 0)
        #expect(f.system.shutdown().isBalanced)
    }
}

@Suite("pipeToSelf on a real scheduler", .serialized) struct PipeToSelfRealSchedulerTests {
    @Test("an outcome computed on the scheduler's workers arrives as a message")
    func realScheduler() throws {
        let system = try makeSystem(workers: 2)
        let results = SignalingProbe<Int>()
        let ref = try system.spawn { (message: Int, context: ActorContext<Int>) in
            if message == 0 {
                context.pipeToSelf({ () async -> Int in
                    await Task.yield()
                    return 41
                }, transform: { result in ((try? result.get()) ?? 0) + 1 })
            } else {
                results.record(message)
            }
        }
        ref.tell(0)
        #expect(results.waitForCount(1))
        #expect(results.values == [42])
        #expect(system.shutdown().isBalanced)
    }
}
