// Pools: routing strategies (the pure selection and through real routees), stop, ask,
// errors and accounting.

import Testing
import Foundation
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport
import FastMailboxTestKit

// Routing decisions read routees' mailbox depths. The tests that need a busy routee run on
// a DeterministicScheduler: nothing runs until the test drives it, so a routee told a
// message stays busy (depth 1) exactly as long as the test wants — no gate, no polling.

private enum Job: Sendable {
    case work(Int)
    case echo(Int, replyTo: ActorRef<String>)
}

/// A routee that ignores its messages (a pool spawned with an actor type).
private final class IgnoringRoutee: EventActor {
    func receive(_ message: Int, context: ActorContext<Int>) {}
}

/// Records (routee name, job number) for every `.work`.
private func recordingPool(_ system: ActorSystem, name: String, size: Int, routing: RoutingStrategy,
                           probe: Probe<String>) throws -> ActorRef<Job> {
    try system.spawn(options: SpawnOptions(name: name, pool: SpawnOptions.Pool(size: size, routing: routing))) { (job: Job, context) in
        switch job {
        case .work(let n):
            probe.record("\(context.name) \(n)")
        case .echo(let n, let replyTo):
            replyTo.tell("\(context.name) \(n)")
        }
    }
}

@Suite("Pool", .serialized) struct PoolTests {
    // MARK: the strategies' decisions (pure)

    @Test("round-robin selection cycles through the routees and skips stopped ones")
    func roundRobinSelection() {
        let open: (Int) -> Int? = { _ in 0 }
        #expect((0..<7).map { RoutingStrategy.roundRobin.select(count: 3, cursor: UInt($0), depth: open) }
                == [0, 1, 2, 0, 1, 2, 0])
        let middleStopped: (Int) -> Int? = { $0 == 1 ? nil : 5 }
        #expect((0..<3).map { RoutingStrategy.roundRobin.select(count: 3, cursor: UInt($0), depth: middleStopped) }
                == [0, 2, 2])
        #expect(RoutingStrategy.roundRobin.select(count: 3, cursor: 0) { _ in nil } == nil)
    }

    @Test("least-loaded selection takes the smallest depth and spreads ties round-robin")
    func leastLoadedSelection() {
        let depths = [3, 2, 5]
        #expect(RoutingStrategy.leastLoaded.select(count: 3, cursor: 0) { depths[$0] } == 1)
        #expect(RoutingStrategy.leastLoaded.select(count: 3, cursor: 2) { depths[$0] } == 1)
        let empty = [3, 0, 0]
        #expect(RoutingStrategy.leastLoaded.select(count: 3, cursor: 0) { empty[$0] } == 1)
        #expect(RoutingStrategy.leastLoaded.select(count: 3, cursor: 2) { empty[$0] } == 2)
        #expect((0..<3).map { c in RoutingStrategy.leastLoaded.select(count: 3, cursor: UInt(c)) { _ in 1 } } == [0, 1, 2])
        let withStopped: [Int?] = [nil, 4, 2]
        #expect(RoutingStrategy.leastLoaded.select(count: 3, cursor: 0) { withStopped[$0] } == 2)
    }

    @Test("first-idle selection takes the lowest-index empty routee, else the least loaded")
    func firstIdleSelection() {
        for cursor in 0..<3 {
            let c = UInt(cursor)
            #expect(RoutingStrategy.firstIdle.select(count: 3, cursor: c) { _ in 0 } == 0)
            #expect(RoutingStrategy.firstIdle.select(count: 3, cursor: c) { [2, 0, 0][$0] } == 1)
            #expect(RoutingStrategy.firstIdle.select(count: 3, cursor: c) { [2, 3, 1][$0] } == 2)
            #expect(RoutingStrategy.firstIdle.select(count: 3, cursor: c) { [nil, 1, 0][$0] } == 2)
        }
    }

    // MARK: routing through real routees

    @Test("a round-robin pool spreads one sender's messages exactly evenly, in order per routee")
    func roundRobinPool() throws {
        let system = try makeSystem()
        let probe = Probe<String>()
        let pool = try recordingPool(system, name: "rr", size: 4, routing: .roundRobin, probe: probe)
        for i in 0..<400 { pool.tell(.work(i)) }
        let report = system.shutdown()  // drains every routee first: the signal that all arrived
        #expect(probe.count == 400)
        for routee in 0..<4 {
            let mine = probe.values.filter { $0.hasPrefix("rr/\(routee) ") }
            #expect(mine == stride(from: routee, to: 400, by: 4).map { "rr/\(routee) \($0)" })
        }
        #expect(report.delivered == 400)
        #expect(report.deadLettered == 0)
    }

    @Test("a least-loaded pool sends to an empty routee rather than a busy one")
    func leastLoadedPool() throws {
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let pool = try recordingPool(system, name: "ll", size: 3, routing: .leastLoaded, probe: probe)
        let routees = try #require(system.routees(of: pool))
        try deterministic.runUntilQuiescent()  // started, idle
        routees[0].tell(.work(-1))
        routees[0].tell(.work(-2))
        routees[1].tell(.work(-3))  // depths now 2, 1, 0 (nothing runs until driven)
        for i in 0..<3 { pool.tell(.work(i)) }  // 0 → ll/2; then ties at depth 1 between ll/1 and ll/2
        try deterministic.runUntilQuiescent()
        #expect(probe.count == 6)
        #expect(probe.values.contains("ll/2 0"))
        #expect(!probe.values.contains { $0.hasPrefix("ll/0 ") && !$0.hasPrefix("ll/0 -") })
        system.shutdown()
    }

    @Test("a first-idle pool keeps the work on the first routee while it is idle, and moves on when it is busy")
    func firstIdlePool() throws {
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let pool = try recordingPool(system, name: "fi", size: 3, routing: .firstIdle, probe: probe)
        let routees = try #require(system.routees(of: pool))
        for i in 0..<5 {
            pool.tell(.work(i))
            try deterministic.runUntilQuiescent()
            #expect(probe.count == i + 1 && routees[0].mailboxDepth == 0)
        }
        #expect(probe.values == (0..<5).map { "fi/0 \($0)" })
        routees[0].tell(.work(-1))  // routee 0 busy until driven
        pool.tell(.work(5))  // routee 0 is busy: the first idle one is 1
        routees[1].tell(.work(-2))
        pool.tell(.work(6))  // 0 and 1 busy: 2
        try deterministic.runUntilQuiescent()
        #expect(probe.count == 9)
        #expect(probe.values.contains("fi/1 5") && probe.values.contains("fi/2 6"))
        system.shutdown()
    }

    @Test("a pool skips a routee that has stopped")
    func skipsStoppedRoutee() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let pool = try recordingPool(system, name: "skip", size: 3, routing: .roundRobin, probe: probe)
        let routees = try #require(system.routees(of: pool))
        routees[1].stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 2)
        for i in 0..<30 { pool.tell(.work(i)) }
        try deterministic.runUntilQuiescent()
        #expect(probe.count == 30)
        #expect(!probe.values.contains { $0.hasPrefix("skip/1 ") })
        #expect(system.deadLetters.count == 0)
        system.shutdown()
    }

    @Test("ask through a pool is answered by one of its routees")
    func askThroughPool() async throws {
        let deterministic = DeterministicScheduler(seed: 4)
        let system = makeDeterministicSystem(deterministic)
        let pool = try recordingPool(system, name: "askers", size: 2, routing: .roundRobin, probe: Probe())
        let first = try await runDriven(deterministic) { try await pool.ask { Job.echo(1, replyTo: $0) } }
        let second = try await runDriven(deterministic) { try await pool.ask { Job.echo(2, replyTo: $0) } }
        #expect(first == "askers/0 1")
        #expect(second == "askers/1 2")
        pool.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        system.shutdown()
    }

    @Test("stopping the pool stops every routee, and later messages go to dead letters")
    func stopPool() throws {
        let deterministic = DeterministicScheduler(seed: 5)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<String>()
        let pool = try recordingPool(system, name: "stopme", size: 3, routing: .leastLoaded, probe: probe)
        #expect(system.metrics.liveActors == 3)
        #expect(system.lookup("stopme/2", as: Job.self) != nil)
        pool.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        pool.tell(.work(1))
        #expect(system.deadLetters.count == 1)
        #expect(probe.count == 0)
        system.shutdown()
    }

    @Test("a pool's routees run specialised turns, whether spawned with an actor type or a closure")
    func routeesAreSpecialised() throws {
        // spawn is inlinable and forms each routee's own turn in the caller, specialised
        // for its actor type, not the generic path (ActorCellBase.handleFromMailbox,
        // generic metadata per message).
        let deterministic = DeterministicScheduler(seed: 41)
        let system = makeDeterministicSystem(deterministic)
        let typed = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 3))) { IgnoringRoutee() }
        let closure = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 2))) { (_: Job, _) in }
        let typedCells = try #require(system.routees(of: typed)).map { try #require($0.identity as? ActorCellBase<Int>) }
        let closureCells = try #require(system.routees(of: closure)).map { try #require($0.identity as? ActorCellBase<Job>) }
        #expect(typedCells.count == 3 && typedCells.allSatisfy { $0.hasOwnTurn })
        #expect(closureCells.count == 2 && closureCells.allSatisfy { $0.hasOwnTurn })
        typed.tell(1)
        closure.tell(.work(1))
        try deterministic.runUntilQuiescent()
        #expect(system.shutdown().delivered == 2)
    }

    @Test("invalid pools are refused: size below one, a taken name")
    func poolErrors() throws {
        let system = try makeSystem()
        #expect(throws: ActorSystemError.invalidPoolSize(0)) {
            try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 0))) { (_: Int, _) in }
        }
        _ = try system.spawn(options: SpawnOptions(name: "taken", pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in }
        #expect(throws: ActorSystemError.duplicateName("taken")) {
            try system.spawn(options: SpawnOptions(name: "taken", pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in }
        }
        #expect(system.metrics.liveActors == 2)
        let plain = try system.spawn { (_: Int, _) in }
        #expect(system.routees(of: plain) == nil)
        system.shutdown()
    }

    @Test("every message sent to a pool from many threads is accounted for at shutdown")
    func poolAccounting() throws {
        let system = try makeSystem()
        let handled = Atomic<Int>(0)
        let pool = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 4, routing: .leastLoaded))) { (_: Int, _) in
            handled.wrappingAdd(1, ordering: .relaxed)
        }
        let perThread = underThreadSanitizer ? 500 : 5_000
        runOnThreads(4) { _ in
            for i in 0..<perThread { pool.tell(i) }
        }
        let report = system.shutdown()
        #expect(report.delivered + report.deadLettered + report.left == 4 * perThread)
        #expect(report.delivered == handled.load(ordering: .relaxed))
        #expect(report.left == 0)
    }
}
