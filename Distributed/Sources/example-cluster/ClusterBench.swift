import Distributed
import FastMailbox
import FastMailboxDistributed
import FastMailboxGRPC
import Foundation
import Logging

/// The message of the bench's echo actor.
struct Echo: Codable, Sendable {
    var sequence: Int
    var replyTo: ActorRef<Int>?
}

/// An event actor that answers each echo with its sequence number.
final class EchoActor: EventActor {
    func receive(_ message: Echo, context: ActorContext<Echo>) {
        message.replyTo?.tell(message.sequence)
    }
}

/// `example-cluster --bench N`: two nodes in this process, joined over gRPC on 127.0.0.1
/// (real HTTP/2 over loopback TCP). Remote ping-pong: N distributed calls, one at a time
/// (round trip each); N asks to a remote event actor; N tells then one ask (throughput).
func runBench(basePort: Int, count: Int) async throws {
    var logger = Logger(label: "cluster-bench")
    logger.logLevel = .error
    let a = Endpoint(host: "127.0.0.1", port: basePort)
    let b = Endpoint(host: "127.0.0.1", port: basePort + 1)
    let actorsA = try ActorSystem(name: "bench-a", logger: logger)
    let actorsB = try ActorSystem(name: "bench-b", logger: logger)
    let nodeB = try await ClusterSystem(settings: ClusterSettings(endpoint: b, peers: [a]), actors: actorsB,
                                        transport: GRPCClusterTransport.http2(logger: logger), logger: logger)
    let nodeA = try await ClusterSystem(settings: ClusterSettings(endpoint: a, peers: [b]), actors: actorsA,
                                        transport: GRPCClusterTransport.http2(logger: logger), logger: logger)
    let tally = Tally()
    let counter = NodeCounter(tally: tally, actorSystem: nodeB)
    nodeB.register(counter, as: "counter")
    nodeB.export(try actorsB.spawn(options: SpawnOptions(name: "echo")) { EchoActor() }, as: "echo")
    let remote = try NodeCounter.resolve(id: try await nodeA.actorID(named: "counter", on: b), using: nodeA)
    let echo: ActorRef<Echo> = try await nodeA.remoteRef(named: "echo", on: b)

    func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
        Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1_000
    }
    func report(_ name: String, _ samples: [UInt64], total: Duration) {
        let sorted = samples.sorted()
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        print(String(format: "%@: %d round trips, %.0f msgs/s, p50 %.0f µs, p99 %.0f µs", name, samples.count,
                     Double(samples.count) / seconds, percentile(sorted, 0.5), percentile(sorted, 0.99)))
    }
    // Warm-up.
    for n in 0..<200 { try await remote.record(from: 0, sequence: n) }

    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    var clock = ContinuousClock.now
    for n in 0..<count {
        let start = DispatchTime.now().uptimeNanoseconds
        try await remote.record(from: 1, sequence: n)
        samples.append(DispatchTime.now().uptimeNanoseconds - start)
    }
    report("distributed call ping-pong", samples, total: ContinuousClock.now - clock)

    samples.removeAll(keepingCapacity: true)
    clock = ContinuousClock.now
    for n in 0..<count {
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try await echo.ask { Echo(sequence: n, replyTo: $0) }
        samples.append(DispatchTime.now().uptimeNanoseconds - start)
    }
    report("remote ActorRef ask ping-pong", samples, total: ContinuousClock.now - clock)

    clock = ContinuousClock.now
    for n in 0..<count { echo.tell(Echo(sequence: n, replyTo: nil)) }
    _ = try await echo.ask { Echo(sequence: -1, replyTo: $0) }
    let elapsed = ContinuousClock.now - clock
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "remote tells (one sender, then one ask): %d in %.3f s, %.0f msgs/s", count, seconds,
                 Double(count) / seconds))
    await nodeA.shutdown()
    await nodeB.shutdown()
    await actorsA.gracefulShutdown()
    await actorsB.gracefulShutdown()
}
