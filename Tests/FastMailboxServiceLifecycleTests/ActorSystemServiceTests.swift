// Runs only with `--traits ServiceLifecycleSupport` (see Package.swift).
#if ServiceLifecycleSupport
import FastMailbox
import FastMailboxServiceLifecycle
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@Suite("ActorSystemService")
struct ActorSystemServiceTests {
    @Test("a graceful shutdown of the service group drains every actor and the books balance")
    func gracefulShutdownDrainsActors() async throws {
        let system = try ActorSystem(configuration: SchedulerConfiguration(workers: 2))
        let handled = Atomic<Int>(0)
        let slow = try system.spawn(options: SpawnOptions(name: "slow")) { (_: Int, _) in
            handled.wrappingAdd(1, ordering: .relaxed)
        }
        for n in 0..<10_000 { slow.tell(n) }
        let reports = Mutex<[ShutdownReport]>([])
        let service = ActorSystemService(system: system, shutdownTimeout: .seconds(10)) { report in
            reports.withLock { $0.append(report) }
        }
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(!system.isShuttingDown)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let report = try #require(reports.withLock { $0.first })
        #expect(reports.withLock { $0.count } == 1)
        #expect(report.isBalanced)
        #expect(report.left == 0 && report.actorsNotStopped == 0)
        #expect(handled.load(ordering: .relaxed) == 10_000)
        #expect(system.isShuttingDown)
    }

    @Test("cancelling the service group still shuts the system down")
    func cancellationShutsDown() async throws {
        let system = try ActorSystem(configuration: SchedulerConfiguration(workers: 2))
        _ = try system.spawn(options: SpawnOptions(name: "idle")) { (_: Int, _) in }
        let service = ActorSystemService(system: system)
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        let task = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        _ = try? await task.value
        #expect(system.isShuttingDown)
        #expect(system.metrics.liveActors == 0)
    }
}
#endif
