// TurnConfinement (debug builds): a context used inside its actor's turn passes every
// check; one kept and used from another thread is reported and touches nothing.

@testable import MNScheduler
import Synchronization
import Testing
import FastMailboxTestKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import FastMailbox
import FastMailboxTestSupport

#if DEBUG
/// Records violations while installed as TurnConfinement's handler.
final class ViolationRecorder: Sendable {
    let seen = Lock<[(operation: String, actor: ActorID)]>([])
    var operations: [String] { seen.withLock { $0.map(\.operation) } }

    func install() {
        TurnConfinement.violationHandler.withLock { handler in
            handler = { [self] operation, actor in seen.withLock { $0.append((operation, actor)) } }
        }
    }
    func uninstall() { TurnConfinement.violationHandler.withLock { $0 = nil } }
}

/// Keeps the context it is given, so the test can use it after the turn. Message 1 (the
/// first time) exercises every checked operation in its turn and stashes itself; message 2
/// unstashes it.
final class ContextKeeper: EventActor, @unchecked Sendable {
    final class Box: @unchecked Sendable {
        var context: ActorContext<Int>?
        var inTurnStashCount = -1
        var received: [Int] = []
    }
    let box: Box
    var stashedOnce = false
    init(box: Box) { self.box = box }
    func receive(_ message: Int, context: ActorContext<Int>) throws {
        box.received.append(message)
        if message == 1, !stashedOnce {
            stashedOnce = true
            context.become { _, _ in }
            context.unbecome()
            _ = context.children
            _ = context.log
            _ = try context.spawn { (_: Int, _) in }
            context.stash(message)
            box.inTurnStashCount = context.stashCount
        } else if message == 2 {
            context.unstashAll()
            box.inTurnStashCount = context.stashCount
        }
        box.context = context
    }
}

@Suite("Turn confinement (debug builds)", .serialized) struct TurnConfinementTests {
    @Test("a context used inside its turn passes every check; kept and used after the turn, each operation is reported and skipped")
    func escapedContextIsReported() throws {
        let recorder = ViolationRecorder()
        recorder.install()
        defer { recorder.uninstall() }
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let box = ContextKeeper.Box()
        let keeper = try system.spawn { ContextKeeper(box: box) }
        keeper.tell(1)
        _ = try deterministic.runUntilQuiescent()
        #expect(recorder.operations.isEmpty, "in-turn uses reported: \(recorder.operations)")
        #expect(box.inTurnStashCount == 1)
        let context = try #require(box.context)

        // Outside any turn (this thread drives the scheduler, but no turn is running).
        context.become { _, _ in Issue.record("a behaviour pushed from outside the turn ran") }
        context.stash(7)
        #expect(context.stashCount == 0)
        context.unstashAll()
        context.unbecome()
        context.watch(keeper)
        context.unwatch(keeper)
        #expect(context.children.isEmpty)
        _ = context.log
        context.stop()
        #expect(throws: ActorSystemError.contextUsedOutsideTurn("spawn")) { try context.spawn { (_: Int, _) in } }
        #expect(recorder.operations == ["become", "stash", "stashCount", "unstashAll", "unbecome", "watch", "unwatch",
                                        "children", "log", "stop", "spawn"])
        #expect(recorder.seen.withLock { $0.allSatisfy { $0.actor == keeper.id } })

        // Nothing was touched: the actor still runs its own receive (no `become` from
        // outside), was not stopped, and its stash still holds message 1 for unstashAll.
        keeper.tell(2)
        _ = try deterministic.runUntilQuiescent()
        #expect(recorder.operations.count == 11, "the second turn's in-turn uses pass")
        #expect(box.inTurnStashCount == 0)
        #expect(box.received == [1, 2, 1])
        let report = system.shutdown()
        #expect(report.left == 0)
    }

    @Test("a context used from another thread while the actor's turn runs is reported")
    func otherThreadDuringTurn() throws {
        let recorder = ViolationRecorder()
        recorder.install()
        defer { recorder.uninstall() }
        let system = try makeSystem()
        let inTurn = Probe<Int>()
        let release = Atomic<Bool>(false)
        let box = ContextKeeper.Box()
        let holder = try system.spawn { (n: Int, context: ActorContext<Int>) in
            box.context = context
            inTurn.record(n)
            while !release.load(ordering: .acquiring) { sched_yield() }  // the turn stays open
        }
        holder.tell(1)
        #expect(eventually { inTurn.count == 1 })
        // The turn is running on a worker: this thread is not it.
        box.context?.become { _, _ in }
        release.store(true, ordering: .releasing)
        #expect(recorder.operations == ["become"])
        _ = system.shutdown()
    }
}
#endif
