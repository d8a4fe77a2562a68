import Testing
import Logging
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("ActorSystem", .serialized) struct ActorSystemTests {
    @Test("tell delivers every message in the order one sender sent it")
    func tellOrder() throws {
        let system = try makeSystem()
        let probe = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "orderly")) { (m: Int, _) in probe.record(m) }
        for i in 0..<10_000 { ref.tell(i) }
        let report = system.shutdown()  // drains the mailbox: the signal that all arrived
        #expect(probe.count == 10_000)
        #expect(probe.values == Array(0..<10_000))
        #expect(report.delivered == 10_000)
        #expect(report.deadLettered == 0)
        #expect(report.left == 0)
    }
}

// MARK: - behaviours used below

enum CounterMessage: Sendable {
    case add(Int)
    case get(replyTo: ActorRef<Int>)
    case fail
    case failWith(String)
}

final class Counter: EventActor {
    var total = 0
    let started: Probe<String>?
    init(started: Probe<String>? = nil) { self.started = started }
    func preStart(context: ActorContext<CounterMessage>) throws { started?.record("start") }
    func postStop(context: ActorContext<CounterMessage>) { started?.record("stop") }
    func receive(_ message: CounterMessage, context: ActorContext<CounterMessage>) throws {
        switch message {
        case .add(let n): total += n
        case .get(let replyTo): replyTo.tell(total)
        case .fail: throw TestFailure.boom
        case .failWith(let s): throw TestFailure.named(s)
        }
    }
}

extension ActorSystemTests {
    @Test("ask returns the reply and each request gets a unique id")
    func askReply() async throws {
        let system = try makeSystem()
        let counter = try system.spawn { Counter() }
        counter.tell(.add(40))
        counter.tell(.add(2))
        let total: Int = try await counter.ask { .get(replyTo: $0) }
        #expect(total == 42)
        var ids = Set<ActorID>()
        for _ in 0..<50 {
            let _: Int = try await counter.ask { (replyTo: ActorRef<Int>) -> CounterMessage in
                ids.insert(replyTo.id)
                return .get(replyTo: replyTo)
            }
        }
        #expect(ids.count == 50, "every ask has its own reply-to (request id)")
        system.shutdown()
    }

    @Test("an ask that times out throws, and its late reply goes to dead letters without a crash")
    func askTimeout() async throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let slow = try system.spawn { (m: ActorRef<Int>, _) in m.tell(7) }
        try deterministic.runUntilQuiescent()
        let asked = Task(executorPreference: deterministic.taskExecutor) {
            let _: Int = try await slow.ask(timeout: .milliseconds(50)) { $0 }
        }
        try deterministic.step()  // the task sends the request; the actor has not run yet
        try deterministic.advanceTime(by: .milliseconds(50))  // "slow": the timeout comes first
        try deterministic.runUntilQuiescent()  // the asker sees the timeout; the actor replies late
        do {
            try await asked.value
            Issue.record("expected a timeout")
        } catch let error as AskError {
            guard case .timedOut = error else { Issue.record("wrong error \(error)"); return }
            #expect(error.description.contains("timed out"))
        }
        #expect(system.deadLetters.count == 1)
        system.shutdown()
    }

    @Test("ask to a stopped actor fails at once with recipientStopped")
    func askStopped() async throws {
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic)
        let counter = try system.spawn { Counter() }
        counter.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        do {
            let _: Int = try await runDriven(deterministic) { try await counter.ask(timeout: .seconds(30)) { .get(replyTo: $0) } }
            Issue.record("expected recipientStopped")
        } catch let error as AskError {
            guard case .recipientStopped = error else { Issue.record("wrong error \(error)"); return }
        }
        system.shutdown()
    }

    @Test("messages to a stopped actor go to dead letters and subscribers see them")
    func deadLetters() async throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let stream = system.deadLetters.subscribe()
        let counter = try system.spawn(options: SpawnOptions(name: "gone")) { Counter() }
        counter.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        counter.tell(.add(1))
        counter.tell(.add(2))
        #expect(system.deadLetters.count == 2)
        var seen: [DeadLetter] = []
        for await letter in stream {
            seen.append(letter)
            if seen.count == 2 { break }
        }
        #expect(seen.map(\.recipientName) == ["gone", "gone"])
        #expect(seen.allSatisfy { $0.reason == .recipientStopped })
        system.shutdown()
    }

    @Test("stop after draining processes what was queued, refuses what comes later")
    func stopAfterDrain() throws {
        let deterministic = DeterministicScheduler(seed: 4)  // nothing runs until driven: no gate needed
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        ref.tell(0)
        for i in 1...100 { ref.tell(i) }
        ref.stop(.afterDrainingMailbox)
        ref.tell(999)  // after the stop request: dead letter
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        #expect(probe.values == Array(0...100))
        #expect(system.deadLetters.count == 1)
        system.shutdown()
    }

    @Test("stop immediately dead-letters what is still queued, and the books balance")
    func stopImmediately() throws {
        let deterministic = DeterministicScheduler(seed: 5)  // all 50 are queued before the first runs
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, context: ActorContext<Int>) in
            if m == 0 { context.stop() }
            probe.record(m)
        }
        for i in 0..<50 { ref.tell(i) }
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        #expect(probe.values == [0])
        #expect(system.deadLetters.count == 49)
        let report = system.shutdown()
        #expect(report.delivered + report.deadLettered == 50)
    }

    @Test("preStart runs before the first message and postStop once after stopping")
    func hooks() throws {
        let deterministic = DeterministicScheduler(seed: 6)
        let system = makeDeterministicSystem(deterministic)
        let events = Probe<String>()
        let ref = try system.spawn { Counter(started: events) }
        ref.tell(.add(1))
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(events.count == 2)
        #expect(events.values == ["start", "stop"])
        system.shutdown()
    }

    @Test("a watcher gets Terminated when the watched actor stops, also if it was already stopped")
    func watch() throws {
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let target = try system.spawn(options: SpawnOptions(name: "target")) { Counter() }
        final class Watcher: EventActor {
            let target: ActorRef<CounterMessage>
            let probe: Probe<String>
            init(_ target: ActorRef<CounterMessage>, _ probe: Probe<String>) { self.target = target; self.probe = probe }
            func preStart(context: ActorContext<String>) throws { context.watch(target) }
            func receive(_ message: String, context: ActorContext<String>) throws { probe.record(message) }
            func receiveSignal(_ signal: Signal, context: ActorContext<String>) throws {
                if case .terminated(let t) = signal { probe.record("terminated \(t.name)") }
            }
        }
        _ = try system.spawn { Watcher(target, probe) }
        try deterministic.runUntilQuiescent()  // the watcher's preStart has run
        target.stop()
        try deterministic.runUntilQuiescent()
        #expect(probe.values == ["terminated target"])
        _ = try system.spawn { Watcher(target, probe) }  // watching a stopped actor
        try deterministic.runUntilQuiescent()
        #expect(probe.values == ["terminated target", "terminated target"])
        let other = try system.spawn { Counter() }
        _ = try system.spawn { (m: String, c: ActorContext<String>) in probe.record(m) }
        final class WatchWith: EventActor {
            let other: ActorRef<CounterMessage>; let probe: Probe<String>
            init(_ o: ActorRef<CounterMessage>, _ p: Probe<String>) { other = o; probe = p }
            func preStart(context: ActorContext<String>) throws { context.watch(other, with: "other is gone") }
            func receive(_ message: String, context: ActorContext<String>) throws { probe.record(message) }
        }
        _ = try system.spawn { WatchWith(other, probe) }
        try deterministic.runUntilQuiescent()
        other.stop()
        try deterministic.runUntilQuiescent()
        #expect(probe.values.last == "other is gone")
        system.shutdown()
    }

    @Test("a throwing behaviour is restarted with fresh state and keeps its mailbox, and the worker survives")
    func restart() async throws {
        let system = try makeSystem()
        let events = Probe<String>()
        let counter = try system.spawn { Counter(started: events) }
        counter.tell(.add(5))
        counter.tell(.fail)
        counter.tell(.add(1))
        let total: Int = try await counter.ask { .get(replyTo: $0) }
        #expect(total == 1, "restart gives fresh state; the message after the failure was kept")
        #expect(events.values == ["start", "stop", "start"])
        system.shutdown()
    }

    @Test("the stop strategy stops a failing actor and the restart limit stops a repeat offender")
    func stopStrategyAndLimit() throws {
        let deterministic = DeterministicScheduler(seed: 8)
        let system = makeDeterministicSystem(deterministic)
        let stopper = try system.spawn(options: SpawnOptions(supervisor: .stop)) { Counter() }
        stopper.tell(.fail)
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        let limited = try system.spawn(options: SpawnOptions(supervisor: .restart(maxRestarts: 3, within: .seconds(60)))) { Counter() }
        for _ in 0..<3 { limited.tell(.fail) }
        limited.tell(.add(1))
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 1, "three restarts are allowed")
        limited.tell(.fail)
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0, "the fourth failure within the window stops it")
        system.shutdown()
    }

    @Test("resume keeps state, escalate fails the parent, whose strategy then decides")
    func resumeAndEscalate() async throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let resumer = try system.spawn(options: SpawnOptions(supervisor: .resume)) { Counter() }
        resumer.tell(.add(3))
        resumer.tell(.fail)
        let total: Int = try await runDriven(deterministic) { try await resumer.ask { .get(replyTo: $0) } }
        #expect(total == 3)

        let events = Probe<String>()
        final class Parent: EventActor {
            let events: Probe<String>
            var child: ActorRef<CounterMessage>?
            init(_ e: Probe<String>) { events = e }
            var supervisorStrategy: SupervisorStrategy { .escalate }
            func preStart(context: ActorContext<ActorRef<ActorRef<CounterMessage>>>) throws {
                events.record("parent start")
                child = try context.spawn { Counter() }
            }
            func postStop(context: ActorContext<ActorRef<ActorRef<CounterMessage>>>) { events.record("parent stop") }
            func receive(_ message: ActorRef<ActorRef<CounterMessage>>, context: ActorContext<ActorRef<ActorRef<CounterMessage>>>) throws {
                message.tell(child!)
            }
        }
        let parent = try system.spawn(options: SpawnOptions(supervisor: .stop)) { Parent(events) }
        let child: ActorRef<CounterMessage> = try await runDriven(deterministic) { try await parent.ask { $0 } }
        child.tell(.fail)
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 1, "child escalated, parent stopped by its .stop supervisor")
        #expect(events.values == ["parent start", "parent stop"])
        system.shutdown()
    }

    @Test("become changes the behaviour for the next message and unbecome restores it")
    func becomeUnbecome() throws {
        let deterministic = DeterministicScheduler(seed: 10)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let ref = try system.spawn { (m: String, context: ActorContext<String>) in
            probe.record("base \(m)")
            if m == "switch" {
                context.become { m, context in
                    probe.record("other \(m)")
                    if m == "back" { context.unbecome() }
                }
            }
        }
        for m in ["a", "switch", "b", "back", "c"] { ref.tell(m) }
        try deterministic.runUntilQuiescent()
        #expect(probe.count == 5)
        #expect(probe.values == ["base a", "base switch", "other b", "other back", "base c"])
        system.shutdown()
    }

    @Test("stashed messages come back in order before newer ones")
    func stash() throws {
        let deterministic = DeterministicScheduler(seed: 11)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let ref = try system.spawn { (m: String, context: ActorContext<String>) in
            if m == "open" {
                probe.record("open")
                context.unstashAll()
                context.become { m, _ in probe.record(m) }
            } else {
                context.stash(m)
            }
        }
        for m in ["1", "2", "3", "open", "4", "5"] { ref.tell(m) }
        try deterministic.runUntilQuiescent()
        #expect(probe.count == 6)
        #expect(probe.values == ["open", "1", "2", "3", "4", "5"])
        system.shutdown()
    }

    @Test("spawn refuses a duplicate name, a bad mailbox capacity, and anything after shutdown")
    func spawnErrors() throws {
        let system = try makeSystem()
        _ = try system.spawn(options: SpawnOptions(name: "unique")) { Counter() }
        #expect(throws: ActorSystemError.duplicateName("unique")) { try system.spawn(options: SpawnOptions(name: "unique")) { Counter() } }
        #expect(throws: ActorSystemError.invalidMailboxCapacity(10)) { try system.spawn(options: SpawnOptions(mailboxCapacity: 10)) { Counter() } }
        #expect(ActorSystemError.invalidMailboxCapacity(10).description.contains("10"))
        system.shutdown()
        #expect(throws: ActorSystemError.shutDown) { try system.spawn { Counter() } }
    }

    @Test("refs are Hashable by actor id and lookup finds a live actor by name")
    func refsAndLookup() throws {
        let system = try makeSystem()
        let a = try system.spawn(options: SpawnOptions(name: "a")) { Counter() }
        let b = try system.spawn(options: SpawnOptions(name: "b")) { Counter() }
        #expect(a != b)
        #expect(Set([a, a, b]).count == 2)
        #expect(system.lookup("a", as: CounterMessage.self) == a)
        #expect(system.lookup("a", as: String.self) == nil, "wrong message type")
        #expect(system.lookup("nobody", as: CounterMessage.self) == nil)
        system.shutdown()
    }

    @Test("spawning costs no thread: 20,000 actors on 2 workers each handle a message")
    func manyActors() throws {
        let system = try makeSystem(workers: 2)
        let count = Atomic<Int>(0)
        var refs: [ActorRef<Int>] = []
        for _ in 0..<20_000 {
            refs.append(try system.spawn { (_: Int, _) in count.wrappingAdd(1, ordering: .relaxed) })
        }
        for ref in refs { ref.tell(1) }
        #expect(system.scheduler.workerCount == 2)
        let report = system.shutdown()  // every actor drains its mailbox first: the signal
        #expect(count.load(ordering: .relaxed) == 20_000)
        #expect(report.delivered == 20_000)
        #expect(report.actorsNotStopped == 0)
    }

    @Test("shutdown drains queued messages, reports the totals, and later tells are dead letters")
    func shutdownAccounting() throws {
        let system = try makeSystem()
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        for i in 0..<1_000 { ref.tell(i) }
        let report = system.shutdown()
        #expect(report.delivered == 1_000)
        #expect(report.left == 0)
        ref.tell(1)
        #expect(system.deadLetters.count == 1)
        #expect(system.shutdown() == report, "a second shutdown returns the first report")
    }
}

extension ActorSystemTests {
    /// The bound on an idle actor's heap block (malloc_usable_size), in debug builds (the
    /// tests run in debug). malloc may report one 16-byte step more for a block carved from
    /// a reused chunk it could not split, so one actor's figure depends on the allocator's
    /// history: the smallest of several is the size class.
    /// An idle actor is its cell alone: the cell stores its mailbox queue (MPSCQueue, "One
    /// object"); a closure actor's cell holds its closure (ClosureCellBehavior), with no
    /// separate actor object; the phase and flags are packed into bytes, and what spawn
    /// rarely gives (a name, a parent, a supervisor, bounded-mailbox waiters) lives in a
    /// side object made only then. The queue's shape bytes and the cell's flag bytes share
    /// one word; the queue's first slot (MailboxQueue.md, "The first slot") is two more.
    /// Debug builds add the turn-confinement word (TurnConfinement.swift).
    static let idleCellBytes = 136

    /// The smallest block over `HeapSampling.count` live cells (see there), each checked
    /// to be its own mailbox queue (nothing else to count).
    private func smallestCellBlock(_ refs: [ActorRef<Int>]) throws -> Int {
        let cells = try refs.map { try #require($0.identity as? ActorCellBase<Int>) }
        #expect(cells.allSatisfy { $0.mailbox.isInline }, "the cell stores its mailbox queue: one object")
        return cells.map { heapBlockSize(of: $0) }.min()!
    }

    @Test("an idle actor's cell and mailbox take a few hundred bytes and no ring")
    func idleActorFootprint() throws {
        let deterministic = DeterministicScheduler(seed: 12)
        let system = makeDeterministicSystem(deterministic)
        let refs = try (0..<HeapSampling.count).map { _ in try system.spawn { (_: Int, _) in } }
        let cells = try refs.map { try #require($0.identity as? ActorCellBase<Int>) }
        #expect(cells.allSatisfy { $0.mailbox.ringBytes == 0 }, "no ring before the first message")
        let cell = try smallestCellBlock(refs)
        #expect(cell <= Self.idleCellBytes, "cell (with its mailbox queue) = \(cell) bytes")
        refs[0].tell(1)
        try deterministic.runUntilQuiescent()
        #expect(cells[0].deliveredCount == 1)
        // A single message travels in the queue's first slot: still no ring.
        #expect(cells[0].mailbox.ringBytes == 0)
        // A second makes the first ring, the small one: two messages are no burst.
        refs[0].tell(2)
        refs[0].tell(3)
        try deterministic.runUntilQuiescent()
        #expect(cells[0].deliveredCount == 3)
        #expect(cells[0].mailbox.ringBytes == RawRing.mailboxAllocationSize(capacity: MPSCQueue.firstRingCapacity, slotBytes: 8))
        system.shutdown()
    }

    @Test("an actor that has processed one message and gone idle is its cell alone: the message needed no ring")
    func afterMessageFootprint() throws {
        let deterministic = DeterministicScheduler(seed: 13)
        let system = makeDeterministicSystem(deterministic)
        let refs = try (0..<HeapSampling.count).map { _ in try system.spawn { (_: Int, _) in } }
        for ref in refs { ref.tell(1) }
        try deterministic.runUntilQuiescent()
        let cells = try refs.map { try #require($0.identity as? ActorCellBase<Int>) }
        #expect(cells.allSatisfy { $0.deliveredCount == 1 })
        // The message travelled in the queue's first slot, inside the cell: no ring was made.
        #expect(cells.allSatisfy { $0.mailbox.ringBytes == 0 })
        let cell = try smallestCellBlock(refs)
        #expect(cell <= Self.idleCellBytes, "cell = \(cell) bytes")
        system.shutdown()
    }

    @Test("SupervisorStrategy keeps value semantics over its shared box")
    func supervisorStrategyValueSemantics() {
        var custom = SupervisorStrategy.default
        custom.maxRestarts = 3
        custom.window = .seconds(5)
        custom.decide = { _ in .stop }
        #expect(custom.maxRestarts == 3 && custom.window == .seconds(5))
        #expect(custom.decide(CancellationError()) == .stop)
        #expect(SupervisorStrategy.default.maxRestarts == 10 && SupervisorStrategy.default.window == .seconds(60))
        #expect(SupervisorStrategy.default.decide(CancellationError()) == .restart)
        #expect(MemoryLayout<SupervisorStrategy>.size == MemoryLayout<Int>.size, "one pointer: every cell stores one")
    }
}
