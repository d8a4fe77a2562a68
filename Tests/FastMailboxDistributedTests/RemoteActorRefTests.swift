import Distributed
import FastMailbox
import FastMailboxDistributed
import Foundation
import MNScheduler
import Testing

@Suite("Distributed: remote ActorRefs", .serialized) struct RemoteActorRefTests {
    @Test("tells to a remote event actor look like local tells and arrive in order; ask works across nodes")
    func tellsAndAsk() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        b.cluster.export(try b.actors.spawn(options: SpawnOptions(name: "sink")) { Sink() }, as: "sink")
        let sink: ActorRef<SinkMessage> = try await a.cluster.remoteRef(named: "sink", on: b.endpoint)
        for sequence in 0..<1_000 { sink.tell(.item(from: 1, sequence: sequence)) }
        let items = try await sink.ask { .get(replyTo: $0) }
        #expect(items == Array(0..<1_000))
        // A call after the tells acknowledges them (replies carry the count received).
        let counter = Counter(actorSystem: b.cluster)
        b.cluster.register(counter, as: "counter")
        let remote = try Counter.resolve(id: try await a.cluster.actorID(named: "counter", on: b.endpoint), using: a.cluster)
        _ = try await remote.add(0)
        let stats = a.cluster.statistics(for: b.endpoint)
        #expect(stats.tellsSent == 1_001 && stats.tellsAcknowledged == 1_001 && stats.isBalanced)
        #expect(a.actors.deadLetters.count == 0 && b.actors.deadLetters.count == 0)
        await a.stop(); await b.stop()
    }

    @Test("an ActorRef passed as a call argument travels as an id and works on the other node")
    func refAsArgument() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let localSink = try a.actors.spawn(options: SpawnOptions(name: "sink")) { Sink() }
        a.cluster.export(localSink, as: "sink")
        let counter = Counter(actorSystem: b.cluster)
        b.cluster.register(counter, as: "counter")
        let remote = try Counter.resolve(id: try await a.cluster.actorID(named: "counter", on: b.endpoint), using: a.cluster)
        for n in 0..<10 { try await remote.forward(n, to: localSink) }
        #expect(try await localSink.ask { .get(replyTo: $0) } == Array(0..<10))
        await a.stop(); await b.stop()
    }

    @Test("a tell to an unknown export is a dead letter there, and an ask through it fails with recipientStopped")
    func unknownExport() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let ghost: ActorRef<SinkMessage> = try await a.cluster.remoteRef(named: "ghost", on: b.endpoint)
        await #expect {
            _ = try await ghost.ask(timeout: .seconds(60)) { .get(replyTo: $0) }
        } throws: { error in
            if case AskError.recipientStopped = error { return true }
            return false
        }
        #expect(b.actors.deadLetters.count == 1)
        await a.stop(); await b.stop()
    }

    @Test("a tell to a stopped exported actor is a dead letter on the receiving node")
    func stoppedExport() async throws {
        let network = LoopbackNetwork()
        let clock = ManualClock()
        let a = try await TestNode.start(port: 1, peers: [2], network: network, clock: clock)
        let b = try await TestNode.start(port: 2, peers: [1], network: network, clock: clock)
        let local = try b.actors.spawn(options: SpawnOptions(name: "sink")) { Sink() }
        b.cluster.export(local, as: "sink")
        local.stop()
        _ = await local.terminated
        let sink: ActorRef<SinkMessage> = try await a.cluster.remoteRef(named: "sink", on: b.endpoint)
        await #expect {
            _ = try await sink.ask(timeout: .seconds(60)) { .get(replyTo: $0) }
        } throws: { error in
            if case AskError.recipientStopped = error { return true }
            return false
        }
        #expect(b.actors.deadLetters.countsByReason.recipientStopped == 1)
        await a.stop(); await b.stop()
    }
}
