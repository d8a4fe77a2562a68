import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import FastMailboxTestKit

/// The ask (with a 60 s timeout) must fail with `recipientStopped`, well before its timeout.
private func expectFailsAtOnceWithRecipientStopped(_ asked: Task<Int, any Error>,
                                                   sourceLocation: SourceLocation = #_sourceLocation) async {
    let start = ContinuousClock.now
    do {
        _ = try await asked.value
        Issue.record("the ask was answered by a stopped actor", sourceLocation: sourceLocation)
    } catch let error as AskError {
        guard case .recipientStopped = error else {
            Issue.record("expected recipientStopped, got \(error)", sourceLocation: sourceLocation)
            return
        }
    } catch {
        Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
    }
    #expect(ContinuousClock.now - start < .seconds(30), "the ask waited for its timeout", sourceLocation: sourceLocation)
}

@Suite("Stop and restart", .serialized) struct StopAndRestartTests {
    @Test("stop(.immediately) on a busy actor: the message in hand finishes, every other one is a dead letter")
    func stopImmediatelyStopsABusyActor() async throws {
        // Deterministic: the test's "other thread" acts inside message 0's turn (the hook),
        // exactly while the actor is busy; no gate, no polling. Seed 1 runs the asking task
        // before the actor, so the ask is queued behind the work (checked below).
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let handled = Probe<Int>()
        final class Hook: @unchecked Sendable { var whileBusy: () -> Void = {} }
        let hook = Hook()
        let ref = try system.spawn(options: SpawnOptions(name: "busy")) { (m: SlowMessage, _) in
            switch m {
            case .work(let n):
                handled.record(n)
                if n == 0 { hook.whileBusy() }
            case .get(let replyTo):
                replyTo.tell(-1)
            }
        }
        try deterministic.runUntilQuiescent()  // started
        for i in 0..<200 { ref.tell(.work(i)) }
        // An ask queued behind the work, before the stop: it must fail at once, not be answered.
        let asked = Task(executorPreference: deterministic.taskExecutor) {
            try await ref.ask(timeout: .seconds(60)) { SlowMessage.get(replyTo: $0) }
        }
        try deterministic.step()
        #expect((ref.identity as? ActorCellBase<SlowMessage>)?.mailbox.count == 201,
                "the ask is queued behind the work")
        hook.whileBusy = {
            ref.stop()
            ref.tell(.work(1_000))  // sent after stop returned
        }
        try deterministic.runUntilQuiescent()  // no virtual time passes: the 60 s timeout cannot fire
        await expectFailsAtOnceWithRecipientStopped(asked)
        #expect(system.metrics.liveActors == 0)
        #expect(handled.values == [0])
        let report = system.shutdown()
        #expect(report.delivered == 1, "\(report)")
        #expect(report.deadLettered == 201, "199 queued, the ask, the late tell: \(report)")
        #expect(report.isBalanced, "\(report)")
    }

    @Test("a stopped actor that never had a message refuses its first tell, from outside the pool and from an actor")
    func firstTellToAStoppedActorIsADeadLetter() throws {
        // Its first slot is still free: a send that would take it refuses the message at
        // once, as a send into a ring does, instead of queueing it for the stopped cell.
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let handled = Probe<Int>()
        let stopped = try system.spawn { (value: Int, _) in handled.record(value) }
        let cell = try #require(stopped.identity as? ActorCellBase<Int>)
        let teller = try system.spawn { (value: Int, _) in stopped.tell(value) }
        try deterministic.runUntilQuiescent()
        stopped.stop()
        try deterministic.runUntilQuiescent()
        let closed = cell.queue.isClosed
        #expect(closed)
        stopped.tell(1)  // from this thread, outside the pool
        #expect(cell.mailbox.count == 0, "refused at once: nothing waits in the first slot")
        teller.tell(2)   // from an actor's turn
        try deterministic.runUntilQuiescent()
        #expect(handled.values.isEmpty)
        #expect(cell.mailbox.count == 0)
        let report = system.shutdown()
        #expect(report.deadLettered == 2, "both tells to the stopped actor: \(report)")
        #expect(report.isBalanced, "\(report)")
    }

    @Test("an ask whose request the actor never handles because it stopped fails at once with recipientStopped")
    func askToActorStoppingAfterAcceptingFailsFast() async throws {
        // Deterministic: nothing runs until driven, so the ask is accepted into the mailbox
        // behind the work before the actor stops itself (seed 1 runs the task first).
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let ref = try system.spawn(options: SpawnOptions(name: "stopper")) { (m: SlowMessage, context: ActorContext<SlowMessage>) in
            if case .work = m { context.stop() }
        }
        try deterministic.runUntilQuiescent()  // started
        ref.tell(.work(0))
        let asked = Task(executorPreference: deterministic.taskExecutor) {
            try await ref.ask(timeout: .seconds(60)) { SlowMessage.get(replyTo: $0) }
        }
        try deterministic.step()
        #expect((ref.identity as? ActorCellBase<SlowMessage>)?.mailbox.count == 2,
                "the ask is accepted behind the work")
        try deterministic.runUntilQuiescent()  // the actor stops itself; the queued ask becomes a dead letter
        await expectFailsAtOnceWithRecipientStopped(asked)
        #expect(system.shutdown().isBalanced)
    }

    @Test("a parent that spawns a named child in preStart survives restarts")
    func restartedParentRespawnsNamedChild() async throws {
        enum ParentMessage: Sendable { case fail, childName(replyTo: ActorRef<String>) }
        final class Parent: EventActor {
            var child: ActorRef<Int>?
            func preStart(context: ActorContext<ParentMessage>) throws {
                child = try context.spawn(options: SpawnOptions(name: "worker-\(context.name)")) { (_: Int, _) in }
            }
            func receive(_ message: ParentMessage, context: ActorContext<ParentMessage>) throws {
                switch message {
                case .fail: throw TestFailure.boom
                case .childName(let replyTo): replyTo.tell(child?.name ?? "none")
                }
            }
        }
        let system = try makeSystem()
        let parents = try (0..<50).map { i in try system.spawn(options: SpawnOptions(name: "parent-\(i)")) { Parent() } }
        for parent in parents { parent.tell(.fail) }
        for parent in parents {
            let name = try await parent.ask(timeout: .seconds(20)) { ParentMessage.childName(replyTo: $0) }
            #expect(name == "worker-\(parent.name)")
            #expect(system.lookup(name, as: Int.self) != nil)
        }
        #expect(system.metrics.liveActors >= 100)
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
    }
}
