import Distributed
import FastMailbox
import FastMailboxDistributed
import Foundation
import MNScheduler
import Testing

@Suite("Distributed: calls", .serialized) struct ClusterCallTests {
    @Test("a local distributed actor runs on the node's scheduler")
    func localRunsOnScheduler() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [], network: network, clock: clock)
        let counter = Counter(actorSystem: a.cluster)
        #expect(try await counter.runsOnScheduler())
        #expect(try await counter.add(2) == 2)
        await a.stop()
    }

    @Test("1,000 remote calls return the right totals, on the remote node's scheduler")
    func remoteCalls() async throws {
        let pair = try await CounterPair.start()
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (_, _, a, b, _, remote) = pair.parts
        #expect(__isRemoteActor(remote))
        var last = 0
        for n in 1...1_000 { last = try await remote.add(n) }
        #expect(last == 500_500)
        #expect(try await remote.runsOnScheduler())
        #expect(try await remote.echo("generic") == "generic")
        let stats = a.cluster.statistics(for: b.endpoint)
        #expect(stats.callsSent == 1_002 && stats.callsSucceeded == 1_002 && stats.callsFailed == 0, "\(stats)")
        await a.stop(); await b.stop()
    }

    @Test("calls one sender issues without waiting arrive in order")
    func callOrder() async throws {
        let pair = try await CounterPair.start()
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (_, _, a, b, _, remote) = pair.parts
        // Each immediate task sends its frame before the loop goes on: one sender, in order.
        var tasks: [Task<Void, any Error>] = []
        for sequence in 0..<500 {
            tasks.append(Task.immediate { try await remote.record(sequence) })
        }
        for task in tasks { try await task.value }
        #expect(try await remote.recorded() == Array(0..<500))
        await a.stop(); await b.stop()
    }

    @Test("a remote error comes back as ClusterError.remoteError")
    func remoteError() async throws {
        let pair = try await CounterPair.start()
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (_, _, a, b, _, remote) = pair.parts
        await #expect(throws: ClusterError.remoteError(type: "CounterError", description: "refused")) {
            _ = try await remote.fail()
        }
        await a.stop(); await b.stop()
    }

    @Test("a call to an unknown actor fails with unknownActor and is a dead letter on the receiving node")
    func unknownActor() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let id = try await a.cluster.actorID(named: "nobody", on: b.endpoint)
        let remote = try Counter.resolve(id: id, using: a.cluster)
        let before = b.actors.deadLetters.count
        await #expect(throws: ClusterError.unknownActor(id)) { _ = try await remote.add(1) }
        #expect(b.actors.deadLetters.count == before + 1)
        #expect(a.actors.deadLetters.count == 0)
        await a.stop(); await b.stop()
    }

    @Test("a deinitialised actor's id is unknown afterwards")
    func stoppedActor() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        var counter: Counter? = Counter(actorSystem: b.cluster)
        let id = counter!.id
        _ = try await a.cluster.peerNode(at: b.endpoint)
        let remote = try Counter.resolve(id: ClusterActorID(node: id.node, name: id.name), using: a.cluster)
        #expect(try await remote.add(1) == 1)
        counter = nil
        // The last reference may be the receiving task of the call above, which ends just
        // after its reply: wait (bounded) until the node no longer resolves the id.
        var yields = 0
        while (try? b.cluster.resolve(id: id, as: Counter.self)) != nil, yields < 1_000_000 {
            yields += 1
            await Task.yield()
        }
        await #expect(throws: ClusterError.unknownActor(id)) { _ = try await remote.add(1) }
        _ = counter
        await a.stop(); await b.stop()
    }
}
