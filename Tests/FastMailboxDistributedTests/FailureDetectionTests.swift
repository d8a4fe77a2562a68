import Distributed
import FastMailbox
import FastMailboxDistributed
import Foundation
import MNScheduler
import Testing

@Suite("Distributed: failure detection", .serialized) struct FailureDetectionTests {
    @Test("a partitioned peer is declared down after the failure timeout: its pending call fails at once, watchers see Terminated, later calls and tells fail")
    func partitionThenDown() async throws {
        let pair = try await CounterPair.start(callTimeout: .seconds(3_600))
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (network, clock, a, b, _, remote) = pair.parts
        b.cluster.export(try b.actors.spawn(options: SpawnOptions(name: "sink")) { Sink() }, as: "sink")
        let sink: ActorRef<SinkMessage> = try await a.cluster.remoteRef(named: "sink", on: b.endpoint)
        #expect(try await remote.add(1) == 1)
        let events = a.cluster.nodeDownEvents()
        network.partition(a.endpoint, b.endpoint)
        // A call whose frame the partition swallows: it waits (a one-hour timeout)…
        let pending = Task.immediate { try await remote.add(1) }  // sent before this line ends
        // …tells go out and are never acknowledged.
        for sequence in 0..<5 { sink.tell(.item(from: 1, sequence: sequence)) }
        // Not yet: half the failure timeout of silence.
        clock.advance(by: .milliseconds(500))
        a.cluster.tick()
        #expect(a.cluster.downNodes.isEmpty)
        clock.advance(by: .milliseconds(600))
        a.cluster.tick()
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event?.node.endpoint == b.endpoint)
        await #expect(throws: ClusterError.nodeDown(remote.id.node)) { _ = try await pending.value }
        let terminated = await sink.terminated
        #expect(terminated.id == sink.id)
        guard case .failed(let reason) = terminated.reason else { Issue.record("reason \(terminated.reason)"); return }
        #expect(reason.contains("node down"))
        // After: calls fail at once, tells are dead letters here.
        await #expect(throws: ClusterError.nodeDown(remote.id.node)) { _ = try await remote.add(1) }
        let before = a.actors.deadLetters.count
        sink.tell(.item(from: 1, sequence: 99))
        #expect(a.actors.deadLetters.count == before + 1)
        let stats = a.cluster.statistics(for: b.endpoint)
        #expect(stats.isBalanced)
        #expect(stats.tellsSent == 5 && stats.tellsInDoubt == 5 && stats.tellsRefused == 1)
        // Every tell accounted for here: 5 in doubt + 1 refused, all dead letters.
        #expect(a.actors.deadLetters.count == 6)
        #expect(stats.callsSent == 2 && stats.callsSucceeded == 1 && stats.callsFailed == 2, "\(stats)")
        await a.stop(); await b.stop()
    }

    @Test("a crashed peer's link closes: pending calls fail with linkLost at once; the detector declares it down; a restart is a new incarnation")
    func crashAndRestart() async throws {
        let pair = try await CounterPair.start(callTimeout: .seconds(3_600))
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (network, clock, a, b, _, remote) = pair.parts
        let oldID = remote.id
        #expect(try await remote.add(1) == 1)
        network.partition(a.endpoint, b.endpoint)
        let pending = Task.immediate { try await remote.add(1) }  // on the wire when this line ends
        #expect(a.cluster.statistics(for: b.endpoint).callsSent == 2)
        network.kill(b.endpoint)
        await #expect(throws: ClusterError.linkLost(b.endpoint)) { _ = try await pending.value }
        clock.advance(by: .seconds(2))
        a.cluster.tick()
        #expect(a.cluster.downNodes.map(\.endpoint) == [b.endpoint])
        await b.stop()
        network.heal(a.endpoint, b.endpoint)
        // The node restarts at the same endpoint: a new incarnation.
        let b2 = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let counter2 = Counter(actorSystem: b2.cluster)
        b2.cluster.register(counter2, as: "counter")
        clock.advance(by: .milliseconds(100))
        a.cluster.tick()  // a (the smaller endpoint) dials again, one interval after its last try
        let newID = try await a.cluster.actorID(named: "counter", on: b2.endpoint)
        #expect(newID.node != oldID.node)
        let remote2 = try Counter.resolve(id: newID, using: a.cluster)
        #expect(try await remote2.add(5) == 5)
        await #expect(throws: ClusterError.nodeDown(oldID.node)) { _ = try await remote.add(1) }
        await a.stop(); await b2.stop()
    }

    @Test("a call without a reply times out on the tick past its deadline, before the peer is declared down")
    func callTimeout() async throws {
        let pair = try await CounterPair.start(callTimeout: .milliseconds(300))
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (network, clock, a, b, _, remote) = pair.parts
        #expect(try await remote.add(1) == 1)
        network.partition(a.endpoint, b.endpoint)
        let pending = Task.immediate { try await remote.add(1) }
        clock.advance(by: .milliseconds(200))
        a.cluster.tick()  // not yet
        clock.advance(by: .milliseconds(200))
        a.cluster.tick()  // past the 300 ms deadline, well inside the 1 s failure timeout
        await #expect {
            _ = try await pending.value
        } throws: { error in
            if case ClusterError.timedOut(let id, let after) = error { return id == 2 && after == .milliseconds(300) }
            return false
        }
        #expect(a.cluster.downNodes.isEmpty)
        network.heal(a.endpoint, b.endpoint)
        await a.stop(); await b.stop()
    }

    @Test("an idle link with heartbeats stays up")
    func heartbeatsKeepAlive() async throws {
        let pair = try await CounterPair.start()
        defer { withExtendedLifetime(pair) {} }  // the pair holds the registered Counter
        let (_, clock, a, b, _, remote) = pair.parts
        for _ in 0..<10 {
            clock.advance(by: .milliseconds(300))
            b.cluster.tick()
            // A round trip orders b's heartbeat before a's next tick (same link, FIFO).
            _ = try await b.cluster.peerNode(at: a.endpoint)
            _ = try await remote.add(0)
            a.cluster.tick()
        }
        #expect(a.cluster.downNodes.isEmpty && b.cluster.downNodes.isEmpty)
        await a.stop(); await b.stop()
    }
}
