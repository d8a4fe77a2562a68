import Distributed
import FastMailbox
import FastMailboxDistributed
import FastMailboxGRPC
import Foundation
import Logging
import Synchronization

/// Prints one line to stdout at once (the coordinator reads it).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// What a surviving node reports at the end, per peer.
struct PeerSummary: Codable {
    var peer: Int
    var tellsAttempted = 0
    var tellsAcknowledged = 0
    var tellsInDoubt = 0
    var tellsRefused = 0
    var tellsUnacknowledged = 0
    var callsAttempted = 0
    var callsOK = 0
    var callsFailed = 0
    /// The peer's own count of what it received from this node (live peers only).
    var received: Tally.PerSender?
}

struct NodeSummary: Codable {
    var node: Int
    var sawNodeDown: [Int] = []
    var watcherSawTerminated: [Int] = []
    var deadLetters = 0
    var peers: [PeerSummary] = []
}

/// One node process: serves, exchanges tells and calls with every peer (phase 1), then —
/// nodes other than the victim — keeps going while the victim is killed (phase 2), and
/// prints a summary.
func runNode(index: Int, ports: [Int], victim: Int, tellsPerPeer: Int, callsPerPeer: Int) async throws {
    var logger = Logger(label: "example-cluster.node\(index)")
    logger.logLevel = .warning
    let actors = try ActorSystem(name: "node\(index)", logger: logger)
    let endpoints = ports.map { Endpoint(host: "127.0.0.1", port: $0) }
    let me = endpoints[index - 1]
    let settings = ClusterSettings(endpoint: me, peers: endpoints, heartbeatInterval: .milliseconds(100),
                                   failureTimeout: .seconds(1), callTimeout: .seconds(3))
    let cluster = try await ClusterSystem(settings: settings, actors: actors,
                                          transport: GRPCClusterTransport.http2(logger: logger), logger: logger)
    let tally = Tally()
    cluster.export(try actors.spawn(options: SpawnOptions(name: "sink")) { Sink(tally: tally) }, as: "sink")
    let counter = NodeCounter(tally: tally, actorSystem: cluster)
    cluster.register(counter, as: "counter")

    let peers = (1...ports.count).filter { $0 != index }
    var sinks: [Int: ActorRef<Ping>] = [:]
    var counters: [Int: NodeCounter] = [:]
    for peer in peers {
        let endpoint = endpoints[peer - 1]
        sinks[peer] = try await cluster.remoteRef(Ping.self, named: "sink", on: endpoint, timeout: .seconds(20))
        counters[peer] = try NodeCounter.resolve(id: try await cluster.actorID(named: "counter", on: endpoint),
                                                 using: cluster)
    }
    emit("READY \(index)")
    var summaries: [Int: PeerSummary] = [:]
    for peer in peers { summaries[peer] = PeerSummary(peer: peer) }
    var nextTell: [Int: Int] = [:]
    var nextCall: [Int: Int] = [:]

    func tell(_ peer: Int) {
        let sequence = nextTell[peer, default: 0]
        nextTell[peer] = sequence + 1
        summaries[peer]!.tellsAttempted += 1
        sinks[peer]!.tell(Ping(from: index, sequence: sequence))
    }
    func call(_ peer: Int) async {
        let sequence = nextCall[peer, default: 0]
        nextCall[peer] = sequence + 1
        summaries[peer]!.callsAttempted += 1
        do {
            try await counters[peer]!.record(from: index, sequence: sequence)
            summaries[peer]!.callsOK += 1
        } catch {
            summaries[peer]!.callsFailed += 1
        }
    }

    // Phase 1: everyone up. Tells and calls interleaved, per peer.
    for round in 0..<max(tellsPerPeer, callsPerPeer) {
        for peer in peers {
            if round < tellsPerPeer { tell(peer) }
            if round < callsPerPeer { await call(peer) }
        }
    }
    for peer in peers { _ = try await counters[peer]!.report(from: index) }
    emit("PHASE1 \(index)")
    if index == victim {
        // Wait to be killed (bounded: the coordinator kills it within seconds).
        try await Task.sleep(for: .seconds(60))
        emit("VICTIM-NOT-KILLED \(index)")
        exit(3)
    }

    // Phase 2: keep talking to everyone while the victim dies; watch it.
    let downEvents = cluster.nodeDownEvents()
    let sawDown = Mutex<[Int]>([])
    let downWatcher = Task {
        for await event in downEvents {
            if let peer = ports.firstIndex(of: event.node.endpoint.port) { sawDown.withLock { $0.append(peer + 1) } }
        }
    }
    let victimSink = sinks[victim]!
    let victimTerminated = Task { await victimSink.terminated }
    let start = ContinuousClock.now
    var afterDown = 0
    while afterDown < 50, ContinuousClock.now - start < .seconds(20) {
        for peer in peers {
            tell(peer)
            await call(peer)
        }
        if !sawDown.withLock({ $0.isEmpty }) { afterDown += 1 }
        try await Task.sleep(for: .milliseconds(2))
    }
    var summary = NodeSummary(node: index)
    let terminated = await victimTerminated.value
    if case .failed(let reason) = terminated.reason, reason.contains("node down") {
        summary.watcherSawTerminated = [victim]
    }
    // Final reports from live peers (their replies also acknowledge every tell before them).
    for peer in peers where peer != victim {
        summaries[peer]!.received = try await counters[peer]!.report(from: index)
    }
    for peer in peers {
        let stats = cluster.statistics(for: endpoints[peer - 1])
        summaries[peer]!.tellsAcknowledged = stats.tellsAcknowledged
        summaries[peer]!.tellsInDoubt = stats.tellsInDoubt
        summaries[peer]!.tellsRefused = stats.tellsRefused
        summaries[peer]!.tellsUnacknowledged = stats.tellsUnacknowledged
    }
    summary.sawNodeDown = sawDown.withLock { $0 }
    summary.deadLetters = actors.deadLetters.count
    summary.peers = peers.map { summaries[$0]! }
    let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
    emit("SUMMARY \(json)")
    // Stay up until the coordinator has every summary (the other survivor may still be
    // calling this node): it writes a line to our stdin.
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            _ = readLine()
            continuation.resume()
        }
    }
    downWatcher.cancel()
    await cluster.shutdown()
    await actors.gracefulShutdown()
}
