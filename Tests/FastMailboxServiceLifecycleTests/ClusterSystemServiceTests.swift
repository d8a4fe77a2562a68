// Runs only with `--traits ServiceLifecycleSupport` (see Package.swift).
#if ServiceLifecycleSupport
import FastMailbox
import FastMailboxDistributed
import FastMailboxServiceLifecycle
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@Suite("ClusterSystemService")
struct ClusterSystemServiceTests {
    func node(_ port: Int, peers: [Int], network: LoopbackNetwork) async throws -> ClusterSystem {
        let actors = try ActorSystem(name: "node\(port)", configuration: SchedulerConfiguration(workers: 2))
        let settings = ClusterSettings(endpoint: Endpoint(host: "loopback", port: port),
                                       peers: peers.map { Endpoint(host: "loopback", port: $0) },
                                       heartbeatInterval: .milliseconds(100), failureTimeout: .seconds(1),
                                       callTimeout: .seconds(5))
        return try await ClusterSystem(settings: settings, actors: actors, transport: LoopbackTransport(network: network))
    }

    @Test("a node run as a Service: graceful shutdown leaves the cluster and drains the node's actors, books balanced")
    func gracefulShutdownLeavesAndDrains() async throws {
        let network = LoopbackNetwork()
        let a = try await node(1, peers: [2], network: network)
        let b = try await node(2, peers: [1], network: network)
        let handled = Mutex(0)
        b.export(try b.actors.spawn(options: SpawnOptions(name: "sink")) { (_: Int, _) in handled.withLock { $0 += 1 } }, as: "sink")
        let sink = try await a.remoteRef(Int.self, named: "sink", on: b.settings.endpoint, timeout: .seconds(10))
        for n in 0..<100 { sink.tell(n) }
        let reports = Mutex<[ShutdownReport]>([])
        let service = ClusterSystemService(cluster: b, shutdownTimeout: .seconds(10)) { report in
            reports.withLock { $0.append(report) }
        }
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for _ in 0..<10_000 where handled.withLock({ $0 }) < 100 { try await Task.sleep(for: .milliseconds(1)) }
            #expect(handled.withLock { $0 } == 100, "the remote tells arrived while the node served")
            #expect(!b.actors.isShuttingDown)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let report = try #require(reports.withLock { $0.first })
        #expect(reports.withLock { $0.count } == 1)
        #expect(report.isBalanced && report.left == 0, "\(report)")
        #expect(b.actors.isShuttingDown)
        // The node left: a call through it now fails instead of waiting.
        await #expect(throws: (any Error).self) {
            _ = try await a.remoteRef(Int.self, named: "sink", on: b.settings.endpoint, timeout: .milliseconds(300))
        }
        await a.shutdown()
        _ = await a.actors.gracefulShutdown(timeout: .seconds(5))
    }
}
#endif
