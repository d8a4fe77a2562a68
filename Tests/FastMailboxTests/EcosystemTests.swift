// Issue 12: swift-log, swift-metrics, the async lifecycle (ref.terminated,
// gracefulShutdown), pools as first-class actors, Terminated equality, name reuse.
// Helpers (eventually, Probe, makeSystem) live in ActorSystemTests.

import Foundation
import Logging
import Metrics
import Synchronization
import Testing
@testable import FastMailbox

/// A swift-log handler that keeps every record (level, message, merged metadata).
final class CapturedLogs: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }
    private let records = Lock<[Record]>([])  // not Mutex: TSan cannot see its futex
    var all: [Record] { records.withLock { $0 } }
    func append(_ record: Record) { records.withLock { $0.append(record) } }

    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            sink.append(Record(level: event.level, message: event.message.description,
                               metadata: merged.mapValues { "\($0)" }))
        }
    }
}

struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }

private func makeSystem(logs: CapturedLogs, level: Logger.Level = .trace,
                        supervisor: SupervisorStrategy = .default) throws -> ActorSystem {
    var configuration = SchedulerConfiguration()
    configuration.workers = 2
    return try ActorSystem(configuration: configuration, defaultSupervisor: supervisor,
                           logger: logs.logger(level: level))
}

/// A system on a deterministic scheduler logging to `logs`: nothing runs until the test
/// drives it, so quiescence, not polling, says when the actors are done.
private func makeDeterministicSystem(_ deterministic: DeterministicScheduler, logs: CapturedLogs,
                                     level: Logger.Level = .trace,
                                     supervisor: SupervisorStrategy = .default) -> ActorSystem {
    ActorSystem(scheduler: deterministic, defaultSupervisor: supervisor, logger: logs.logger(level: level))
}

@Suite("Logging (issue 12)", .serialized) struct LoggingTests {
    @Test("a throwing actor's restarts are logged at warning with its id, name and error, and its final stop at error")
    func restartsAreLogged() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic, logs: logs, supervisor: .restart(maxRestarts: 3, within: .seconds(60)))
        let ref = try system.spawn(options: SpawnOptions(name: "thrower")) { (_: Int, _) in throw Boom() }
        for n in 0..<4 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.statistics.liveActors == 0)
        system.shutdown()
        let decisions = logs.all.filter { $0.metadata["supervisor/directive"] != nil }
        #expect(decisions.map(\.level) == [.warning, .warning, .warning, .error])
        #expect(decisions.map { $0.metadata["supervisor/directive"] } == ["restart", "restart", "restart", "stop"])
        for record in decisions {
            #expect(record.metadata["actor/name"] == "thrower")
            #expect(record.metadata["actor/id"] == "\(ref.id.rawValue)")
            #expect(record.metadata["error"] == "boom")
            #expect(record.metadata["actor/system"] == "fastmailbox")
        }
        #expect(system.metrics.restarts == 3)
        #expect(system.metrics.failedStops == 1)
    }

    @Test("stop and escalate decisions are logged at error")
    func stopAndEscalateAreLogged() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic, logs: logs, supervisor: .stop)
        let stopped = try system.spawn(options: SpawnOptions(name: "stops")) { (_: Int, _) in throw Boom() }
        let escalating = try system.spawn(options: SpawnOptions(name: "escalates", supervisor: .escalate)) { (_: Int, _) in throw Boom() }
        stopped.tell(1)
        escalating.tell(1)
        try deterministic.runUntilQuiescent()
        #expect(system.statistics.liveActors == 0)
        system.shutdown()
        let byName = Dictionary(grouping: logs.all.filter { $0.metadata["supervisor/directive"] != nil }) {
            $0.metadata["actor/name"] ?? ""
        }
        #expect(byName["stops"]?.map(\.level) == [.error])
        #expect(byName["escalates"]?.map { $0.metadata["supervisor/directive"] } == ["escalate"])
        #expect(byName["escalates"]?.map(\.level) == [.error])
    }

    @Test("context.log carries the actor's id and name and the system's name")
    func contextLogMetadata() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic, logs: logs)
        let ref = try system.spawn(options: SpawnOptions(name: "talker")) { (text: String, context) in context.log.info("\(text)") }
        ref.tell("hello")
        try deterministic.runUntilQuiescent()
        #expect(logs.all.contains { $0.message == "hello" })
        system.shutdown()
        let record = try #require(logs.all.first { $0.message == "hello" })
        #expect(record.level == .info)
        #expect(record.metadata["actor/id"] == "\(ref.id.rawValue)")
        #expect(record.metadata["actor/name"] == "talker")
        #expect(record.metadata["actor/system"] == "fastmailbox")
    }

    @Test("delivered messages log nothing, even at trace level")
    func nothingPerMessage() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 4, throughput: 64)
        let system = makeDeterministicSystem(deterministic, logs: logs, level: .trace)
        let ref = try system.spawn(options: SpawnOptions(name: "quiet")) { (_: Int, _) in }
        for n in 0..<10_000 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.statistics.delivered == 10_000)
        #expect(logs.all.isEmpty)
        system.shutdown()
    }
}

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

@Suite("Metrics (issue 12)", .serialized) struct MetricsTests {
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
        #expect(before.deadLetters == DeadLetterCounts(recipientStopped: 2))
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
        #expect(system.statistics.delivered == 500)
        reporter.report()
        #expect(backend.value("fastmailbox_messages_delivered_total") == 500)
        #expect(backend.value("fastmailbox_live_actors") == 1)
        for n in 0..<250 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.statistics.delivered == 750)
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.statistics.liveActors == 0)
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

    @Test("the reporter's run() samples until cancelled, then takes a last sample")
    func reporterRunsUntilCancelled() async throws {
        let system = try makeSystem(logs: CapturedLogs(), level: .info)
        let backend = RecordingMetrics()
        let reporter = ActorSystemMetricsReporter(system: system, interval: .milliseconds(20), factory: backend)
        let task = Task { await reporter.run() }
        let ref = try system.spawn(options: SpawnOptions(name: "counted")) { (_: Int, _) in }
        for n in 0..<10 { ref.tell(n) }
        #expect(eventually { backend.value("fastmailbox_messages_delivered_total") == 10 })
        await system.gracefulShutdown()
        task.cancel()
        await task.value
        #expect(backend.value("fastmailbox_live_actors") == 0)
    }
}

@Suite("Async lifecycle (issue 12)", .serialized) struct AsyncLifecycleTests {
    @Test("await ref.terminated returns how the actor stopped, and at once when it already has")
    func terminatedFromPlainCode() async throws {
        let system = try makeSystem()
        let ref = try system.spawn(options: SpawnOptions(name: "failing", supervisor: .stop)) { (_: Int, _) in throw Boom() }
        async let ended = ref.terminated
        ref.tell(1)
        let termination = await ended
        #expect(termination == Terminated(id: ref.id, name: "failing", reason: .failed("boom")))
        #expect(await ref.terminated == termination)  // already stopped: at once, same value
        let stopped = try system.spawn { (_: Int, _) in }
        stopped.stop()
        #expect(await stopped.terminated.reason == .stopped)
        await system.gracefulShutdown()
    }

    @Test("await ref.terminated ends with systemShutDown when the system shuts down")
    func terminatedAtShutdown() async throws {
        let system = try makeSystem()
        let ref = try system.spawn(options: SpawnOptions(name: "idle")) { (_: Int, _) in }
        async let ended = ref.terminated
        await system.gracefulShutdown()
        #expect(await ended.reason == .systemShutDown)
        #expect(await ref.terminated.reason == .systemShutDown)  // after shutdown too
    }

    @Test("Terminated values with the same actor but different reasons are not equal")
    func terminatedEqualityIncludesReason() {
        let id = ActorID(rawValue: 7)
        let stopped = Terminated(id: id, name: "a", reason: .stopped)
        #expect(stopped == Terminated(id: id, name: "a", reason: .stopped))
        #expect(stopped != Terminated(id: id, name: "a", reason: .failed("x")))
        #expect(Terminated(id: id, name: "a", reason: .failed("x")) != Terminated(id: id, name: "a", reason: .failed("y")))
        #expect(Set([stopped, Terminated(id: id, name: "a", reason: .systemShutDown)]).count == 2)
    }

    @Test("a name is free again by the time the actor's end is awaited or watched")
    func nameReusableAfterTermination() async throws {
        let system = try makeSystem()
        // From plain code: stop, await, spawn a successor under the same name.
        for round in 0..<200 {
            let ref = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }
            for n in 0..<50 { ref.tell(n) }  // queued messages: the stop's drain takes a while
            ref.stop(round.isMultiple(of: 2) ? .immediately : .afterDrainingMailbox)
            _ = await ref.terminated
            #expect(throws: Never.self) { _ = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }.stop() }
            _ = await system.lookup("reused", as: Int.self)?.terminated
        }
        // From a watcher: its Terminated handler respawns under the name.
        let failures = Atomic<Int>(0)
        let respawned = Atomic<Int>(0)
        let handledEnd = DispatchSemaphore(value: 0)
        enum Control: Sendable { case watch(ActorRef<Int>), ended }
        let watcher = try system.spawn(options: SpawnOptions(name: "watcher")) { (message: Control, context) in
            switch message {
            case .watch(let ref): context.watch(ref, with: .ended)
            case .ended:
                do {
                    _ = try context.system.spawn(options: SpawnOptions(name: "watched")) { (_: Int, _) in }.stop()
                    respawned.wrappingAdd(1, ordering: .relaxed)
                } catch { failures.wrappingAdd(1, ordering: .relaxed) }
                handledEnd.signal()
            }
        }
        for _ in 0..<100 {
            let ref = try system.spawn(options: SpawnOptions(name: "watched")) { (_: Int, _) in }
            watcher.tell(.watch(ref))
            for n in 0..<50 { ref.tell(n) }
            ref.stop()
            _ = await ref.terminated
            #expect(handledEnd.wait(timeout: .now() + 20) == .success)  // the watcher handled the end
            if let successor = system.lookup("watched", as: Int.self) { _ = await successor.terminated }
            if failures.load(ordering: .relaxed) > 0 { break }
            respawned.store(0, ordering: .relaxed)
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(await system.gracefulShutdown().isBalanced)
    }

    @Test("gracefulShutdown never holds a cooperative thread: shutdowns waiting on busy actors let other tasks run")
    func gracefulShutdownDoesNotBlockCooperativePool() async throws {
        // Each system's only actor spins until a task on Swift's pool opens the gate. If the
        // shutdowns held cooperative threads (more of them than the pool has), that task
        // could not run before their 10 s timeouts.
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let gate = Atomic<Bool>(false)
        var systems: [ActorSystem] = []
        for index in 0..<count {
            var configuration = SchedulerConfiguration()
            configuration.workers = 1
            let system = try ActorSystem(name: "s\(index)", configuration: configuration)
            let ref = try system.spawn(options: SpawnOptions(name: "busy")) { (_: Int, _) in
                while !gate.load(ordering: .acquiring) { usleep(200) }
            }
            ref.tell(1)
            systems.append(system)
        }
        let started = ContinuousClock.now
        let opener = Task {
            try? await Task.sleep(for: .milliseconds(200))
            gate.store(true, ordering: .releasing)
        }
        let reports = await withTaskGroup(of: ShutdownReport.self) { group in
            for system in systems { group.addTask { await system.gracefulShutdown(timeout: .seconds(10)) } }
            var all: [ShutdownReport] = []
            for await report in group { all.append(report) }
            return all
        }
        await opener.value
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(reports.count == count)
        #expect(reports.allSatisfy { $0.isBalanced && $0.actorsNotStopped == 0 && $0.delivered == 1 })
        for system in systems { #expect(system.shutdown().delivered == 1) }  // idempotent: the same report
    }
}

@Suite("Pools as actors (issue 12)", .serialized) struct PoolLifecycleTests {
    @Test("a pool is registered under its name, watchable, and frees its name when it terminates")
    func poolIsFirstClass() async throws {
        let system = try makeSystem()
        let pool = try system.spawn(options: SpawnOptions(name: "pool", pool: SpawnOptions.Pool(size: 3))) { (_: Int, _) in }
        #expect(system.lookup("pool", as: Int.self) == pool)
        #expect(system.lookup("pool", as: String.self) == nil)
        #expect(throws: ActorSystemError.duplicateName("pool")) { try system.spawn(options: SpawnOptions(name: "pool")) { (_: Int, _) in } }
        #expect(system.statistics.liveActors == 3)  // the routees; the pool ref is not an actor of its own

        let probe = SignalingProbe<Terminated>()
        let watching = DispatchSemaphore(value: 0)
        _ = try system.spawn(options: SpawnOptions(name: "signals")) { SignalRecorder(probe: probe, target: pool, watching: watching) }
        #expect(watching.wait(timeout: .now() + 20) == .success)
        #expect(system.statistics.liveActors == 4)
        pool.stop()
        let termination = await pool.terminated
        #expect(termination == Terminated(id: pool.id, name: "pool", reason: .stopped))
        #expect(probe.waitForCount(1))
        #expect(probe.values == [termination])
        #expect(system.lookup("pool", as: Int.self) == nil)
        let again = try system.spawn(options: SpawnOptions(name: "pool", pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in }
        #expect(system.lookup("pool", as: Int.self) == again)
        #expect(await system.gracefulShutdown().isBalanced)
        #expect(await again.terminated.reason == .systemShutDown)
    }

    @Test("a pool whose routees all fail terminates with the last failure")
    func poolEndsWithRouteeFailure() async throws {
        let system = try makeSystem()
        let pool = try system.spawn(options: SpawnOptions(name: "fragile", supervisor: .stop, pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in throw Boom() }
        pool.tell(1)
        pool.tell(2)
        #expect(await pool.terminated.reason == .failed("boom"))
        await system.gracefulShutdown()
    }
}

/// Watches `target` from preStart and records the `.terminated` signal.
private final class SignalRecorder: EventActor {
    let probe: SignalingProbe<Terminated>
    let target: ActorRef<Int>
    let watching: DispatchSemaphore
    init(probe: SignalingProbe<Terminated>, target: ActorRef<Int>, watching: DispatchSemaphore) {
        self.probe = probe
        self.target = target
        self.watching = watching
    }
    func preStart(context: ActorContext<Int>) throws {
        context.watch(target)
        watching.signal()
    }
    func receive(_ message: Int, context: ActorContext<Int>) {}
    func receiveSignal(_ signal: Signal, context: ActorContext<Int>) {
        if case .terminated(let t) = signal { probe.record(t) }
    }
}
