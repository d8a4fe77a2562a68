// The common turn's fast path (ActorCellBase.runTurn, "Specialised turns") against the
// full rules, with many messages per turn: every message is queued before the scheduler
// is driven and the throughput is 64, so one turn starts on the fast path and must hand
// over to the general rules in the middle of its messages when the behaviour stops,
// stashes, unstashes or becomes, or when a stop arrives from outside.

import FastMailbox
@testable import MNScheduler
import Testing
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Turn fast path") struct TurnFastPathTests {
    /// Records what a behaviour handled, in order (MNScheduler's Lock, which
    /// ThreadSanitizer sees, unlike Mutex).
    final class Record: Sendable {
        private let lock = Lock<[String]>([])
        func add(_ entry: String) { lock.withLock { $0.append(entry) } }
        var entries: [String] { lock.withLock { $0 } }
    }

    /// Stashes 2 and 3 the first time, unstashes them on 5, becomes a behaviour that
    /// records "b<n>" on 8.
    final class Juggler: EventActor {
        let record: Record
        var stashedOnce: Set<Int> = []
        init(record: Record) { self.record = record }
        func receive(_ n: Int, context: ActorContext<Int>) {
            if (n == 2 || n == 3), stashedOnce.insert(n).inserted {
                context.stash(n)
                return
            }
            record.add("\(n)")
            if n == 5 { context.unstashAll() }
            if n == 8 {
                let record = self.record
                context.become { m, _ in record.add("b\(m)") }
            }
        }
    }

    /// Spawns `make(record)` as `name` on a deterministic system (throughput 64), lets it start, tells
    /// it 0..<count, runs the one turn that finds them all in the mailbox, then the rest,
    /// and checks that what it recorded is `expected`, that all `count` were delivered
    /// once and that shutdown balances.
    func expectInOneTurn<A: EventActor>(_ name: String, seed: UInt64, count: Int, _ expected: [String],
                                        _ make: @escaping @Sendable (Record) -> A) throws where A.Message == Int, A: SendableMetatype {
        let deterministic = DeterministicScheduler(seed: seed, throughput: 64)
        let system = makeDeterministicSystem(deterministic)
        let record = Record()
        let ref = try system.spawn(options: SpawnOptions(name: name)) { make(record) }
        try deterministic.runUntilQuiescent()  // started: the next turn is a running cell's
        for n in 0..<count { ref.tell(n) }
        try deterministic.step()  // one turn: all of them are in the mailbox
        try deterministic.runUntilQuiescent()
        #expect(record.entries == expected)
        #expect(system.metrics.delivered == count, "each message delivered once (stashing gives a delivery back)")
        let report = system.shutdown()
        #expect(report.deadLettered == 0 && report.isBalanced, "\(report)")
    }

    @Test("stash, unstashAll and become inside one many-message turn keep the order and the exact count")
    func stashUnstashBecomeInOneTurn() throws {
        // Unstashed 2 and 3 go before what was still in the mailbox after 5.
        try expectInOneTurn("juggler", seed: 3, count: 12, ["0", "1", "4", "5", "2", "3", "6", "7", "8", "b9", "b10", "b11"]) {
            Juggler(record: $0)
        }
    }

    /// Becomes a behaviour that records "b<n>" on 1 and on 5; that behaviour unbecomes on 3
    /// and on 7.
    final class Switcher: EventActor {
        let record: Record
        init(record: Record) { self.record = record }
        func receive(_ n: Int, context: ActorContext<Int>) {
            record.add("\(n)")
            guard n == 1 || n == 5 else { return }
            let record = self.record
            context.become { m, context in
                record.add("b\(m)")
                if m == 3 || m == 7 { context.unbecome() }
            }
        }
    }

    @Test("become and unbecome, twice inside one many-message turn: each message goes to the behaviour on top when it is handled")
    func becomeUnbecomeTwiceInOneTurn() throws {
        try expectInOneTurn("switcher", seed: 5, count: 10, ["0", "1", "b2", "b3", "4", "5", "b6", "b7", "8", "9"]) {
            Switcher(record: $0)
        }
    }

    /// Records each message; on `stopAt` stops itself, through the context or through its ref.
    final class Stopper: EventActor {
        let record: Record
        let stopAt: Int
        let viaRef: Bool
        init(record: Record, stopAt: Int, viaRef: Bool) {
            self.record = record
            self.stopAt = stopAt
            self.viaRef = viaRef
        }
        func receive(_ n: Int, context: ActorContext<Int>) {
            record.add("\(n)")
            guard n == stopAt else { return }
            if viaRef { context.myself.stop() } else { context.stop() }
        }
    }

    @Test("a stop in the middle of a many-message turn: the message in hand is the last one handled, the rest are dead letters",
          arguments: [false, true])
    func stopInTheMiddleOfATurn(viaRef: Bool) throws {
        let deterministic = DeterministicScheduler(seed: 4, throughput: 64)
        let system = makeDeterministicSystem(deterministic)
        let record = Record()
        let ref = try system.spawn(options: SpawnOptions(name: "stopper")) { Stopper(record: record, stopAt: 3, viaRef: viaRef) }
        try deterministic.runUntilQuiescent()
        for n in 0..<12 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(record.entries == ["0", "1", "2", "3"])
        #expect(system.metrics.liveActors == 0)
        let report = system.shutdown()
        #expect(report.delivered == 4, "\(report)")
        #expect(report.deadLettered == 8, "\(report)")
        #expect(report.isBalanced, "\(report)")
    }

    @Test("a stop asked for in a pass's last message is finished in that turn: the mailbox ran dry, or the budget ran out",
          arguments: [(throughput: 64, sent: 4), (throughput: 3, sent: 9)])
    func stopInAPassLastMessage(throughput: Int, sent: Int) throws {
        /// Records each message and its postStop; stops itself on 3.
        final class LastStopper: EventActor {
            let record: Record
            init(record: Record) { self.record = record }
            func receive(_ n: Int, context: ActorContext<Int>) {
                record.add("\(n)")
                if n == 3 { context.stop() }
            }
            func postStop(context: ActorContext<Int>) { record.add("postStop") }
        }
        let deterministic = DeterministicScheduler(seed: 6, throughput: throughput)
        let system = makeDeterministicSystem(deterministic)
        let record = Record()
        let ref = try system.spawn(options: SpawnOptions(name: "last")) { LastStopper(record: record) }
        try deterministic.runUntilQuiescent()
        ref.tell(0)  // through the queue's first slot, in a turn of its own
        try deterministic.runUntilQuiescent()
        for n in 1..<sent { ref.tell(n) }
        try deterministic.step()  // the one turn that handles 1…3 and stops on 3
        #expect(record.entries == ["0", "1", "2", "3", "postStop"], "stopped by the end of the turn that asked")
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        let report = system.shutdown()
        #expect(report.delivered == 4 && report.deadLettered == sent - 4, "\(report)")
        #expect(report.isBalanced, "\(report)")
    }

    @Test("a turn budget smaller than the burst: each turn handles its share on the fast path, in order, none lost")
    func burstOverSeveralTurns() throws {
        let deterministic = DeterministicScheduler(seed: 5, throughput: 7)
        let system = makeDeterministicSystem(deterministic)
        let record = Record()
        let ref = try system.spawn(options: SpawnOptions(name: "burst")) { (n: Int, _) in record.add("\(n)") }
        try deterministic.runUntilQuiescent()
        for n in 0..<100 { ref.tell(n) }
        var turns = 0
        while try deterministic.step() { turns += 1 }
        // The first message waits in the queue's first slot and ends a turn of its own
        // (MailboxQueue.md, "The first slot"); the other 99 take turns of 7.
        #expect(turns == 16, "1 message from the first slot, then 99 at 7 per turn")
        #expect(record.entries == (0..<100).map { "\($0)" })
        let report = system.shutdown()
        #expect(report.delivered == 100 && report.isBalanced, "\(report)")
    }
}
