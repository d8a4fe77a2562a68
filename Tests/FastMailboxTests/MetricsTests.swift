import Foundation
import Logging
import Metrics
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit
import MNScheduler

// What the runtime reports through swift-metrics (loggers come from LoggingTests).

/// A swift-metrics backend that keeps each counter's total and each gauge's last value.
final class RecordingMetrics: MetricsFactory, Sendable {
    final class Handler: CounterHandler, RecorderHandler, Sendable {
        let value = Atomic<Int64>(0)
        let updates = Atomic<Int>(0)
        func increment(by amount: Int64) {
            value.wrappingAdd(amount, ordering: .relaxed)
            updates.wrappingAdd(1, ordering: .relaxed)
        }
        func reset() { value.store(0, ordering: .relaxed) }
        func record(_ value: Int64) { self.value.store(value, ordering: .relaxed) }
        func record(_ value: Double) { self.value.store(Int64(value), ordering: .relaxed) }
    }
    private let handlers = Lock<[String: Handler]>([:])

    func value(_ label: String, _ dimensions: [(String, String)] = [("system", "fastmailbox")]) -> Int64? {
        handlers.withLock { $0[key(label, dimensions)]?.value.load(ordering: .relaxed) }
    }
    private func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        label + dimensions.map { "{\($0.0)=\($0.1)}" }.joined()
    }
    private func handler(_ label: String, _ dimensions: [(String, String)]) -> Handler {
        handlers.withLock { table in
            if let existing = table[key(label, dimensions)] { return existing }
            let fresh = Handler()
            table[key(label, dimensions)] = fresh
            return fresh
        }
    }
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { handler(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        handler(label, dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { NOOPMetricsHandler.instance }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
}

@Suite("Metrics", .serialized) struct MetricsTests {
    @Test("the snapshot counts live actors, deliveries, dead letters by reason and mailbox overflows")
    func snapshot() async throws {
        // Deterministic: "slow" is an actor the test does not drive yet — no spinning gate.
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic, logs: CapturedLogs(), level: .info)
        let slow = try system.spawn(options: SpawnOptions(name: "slow", mailboxCapacity: 4)) { (_: Int, _) in }
        let gone = try system.spawn(options: SpawnOptions(name: "gone")) { (_: Int, _) in }
        gone.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 1)
        for n in 0..<100 { slow.tell(n) }  // a ring of 4 slots: most of these overflow
        gone.tell(1)
        gone.tell(2)
        let before = system.metrics
        #expect(before.mailboxOverflows >= 90)
        #expect(before.deadLetters == ActorSystemMetrics.DeadLetterCounts(recipientStopped: 2))
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.delivered == 100)
        let report = await system.gracefulShutdown()
        let after = system.metrics
        #expect(after.liveActors == 0)
        #expect(after.delivered == report.delivered)
        #expect(after.deadLetters.total == report.deadLettered)
        #expect(after.mailboxOverflows == before.mailboxOverflows)  // kept when the actor left
    }

    @Test("the reporter publishes differences, so each counter equals the snapshot's total")
    func reporterPublishesTotals() throws {
        let deterministic = DeterministicScheduler(seed: 8)
        let system = makeDeterministicSystem(deterministic, logs: CapturedLogs(), level: .info)
        let backend = RecordingMetrics()
        let reporter = ActorSystemMetricsReporter(system: system, factory: backend)
        let ref = try system.spawn(options: SpawnOptions(name: "counted")) { (_: Int, _) in }
        for n in 0..<500 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.delivered == 500)
        reporter.report()
        #expect(backend.value("fastmailbox_messages_delivered_total") == 500)
        #expect(backend.value("fastmailbox_live_actors") == 1)
        for n in 0..<250 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.delivered == 750)
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        ref.tell(0)
        reporter.report()
        reporter.report()  // nothing new: adds zero
        #expect(backend.value("fastmailbox_messages_delivered_total") == 750)
        #expect(backend.value("fastmailbox_live_actors") == 0)
        #expect(backend.value("fastmailbox_dead_letters_total",
                              [("system", "fastmailbox"), ("reason", "recipient_stopped")]) == 1)
        #expect(backend.value("fastmailbox_dead_letters_total",
                              [("system", "fastmailbox"), ("reason", "system_shut_down")]) == 0)
        system.shutdown()
    }

    @Test("the reporter publishes the workers' idle searches")
    func reporterPublishesIdleSearches() throws {
        let system = try ActorSystem(configuration: SchedulerConfiguration(
            workers: 1, spinCount: 0, idleSearchMicroseconds: 200, blockingThresholdMilliseconds: 0,
            readsEnvironment: false))
        defer { system.shutdown() }
        let backend = RecordingMetrics()
        let reporter = ActorSystemMetricsReporter(system: system, factory: backend)
        let children = try (0..<64).map { _ in try system.spawn { (_: Int, _) in } }
        // One turn tells all 64: they run back to back on the one worker, a stream, so the
        // worker searches on before it parks (SchedulerProtocols.md, "The idle search").
        let starter = try system.spawn { (_: Int, _) in for child in children { child.tell(1) } }
        starter.tell(0)
        #expect(eventually { system.scheduler.metrics.idleSearches >= 1 })
        let sample = reporter.report()
        #expect(sample.scheduler.idleSearches >= 1)
        #expect(backend.value("fastmailbox_scheduler_idle_searches_total") == Int64(sample.scheduler.idleSearches))
    }

    @Test("the reporter's run() samples until cancelled, then takes a last sample")
    func reporterRunsUntilCancelled() async throws {
        let system = try makeSystem(logs: CapturedLogs(), level: .info)
        let backend = RecordingMetrics()
        let reporter = ActorSystemMetricsReporter(system: system, interval: .milliseconds(20), factory: backend)
        let task = Task { await reporter.run() }
        let ref = try system.spawn(options: SpawnOptions(name: "counted")) { (_: Int, _) in }
        for n in 0..<10 { ref.tell(n) }
        #expect(await eventually { backend.value("fastmailbox_messages_delivered_total") == 10 })
        await system.gracefulShutdown()
        task.cancel()
        await task.value
        #expect(backend.value("fastmailbox_live_actors") == 0)
    }
}
