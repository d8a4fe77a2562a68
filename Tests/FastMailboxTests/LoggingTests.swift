// What the runtime logs through swift-log: supervision, dead letters, lifecycle, and the
// levels and metadata they carry.

import Foundation
import Logging
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit
import MNScheduler

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

/// A system on two workers logging to `logs`.
func makeSystem(logs: CapturedLogs, level: Logger.Level = .trace,
                supervisor: SupervisorStrategy = .default) throws -> ActorSystem {
    var configuration = SchedulerConfiguration()
    configuration.workers = 2
    return try ActorSystem(configuration: configuration, defaultSupervisor: supervisor,
                           logger: logs.logger(level: level))
}

/// A system on a deterministic scheduler logging to `logs`: nothing runs until the test
/// drives it, so quiescence, not polling, says when the actors are done.
func makeDeterministicSystem(_ deterministic: DeterministicScheduler, logs: CapturedLogs,
                             level: Logger.Level = .trace,
                             supervisor: SupervisorStrategy = .default) -> ActorSystem {
    ActorSystem(scheduler: deterministic, defaultSupervisor: supervisor, logger: logs.logger(level: level))
}

@Suite("Logging", .serialized) struct LoggingTests {
    @Test("a throwing actor's restarts are logged at warning with its id, name and error, and its final stop at error")
    func restartsAreLogged() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 1)
        let system = makeDeterministicSystem(deterministic, logs: logs, supervisor: .restart(maxRestarts: 3, within: .seconds(60)))
        let ref = try system.spawn(options: SpawnOptions(name: "thrower")) { (_: Int, _) in throw Boom() }
        for n in 0..<4 { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
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
        #expect(system.metrics.liveActors == 0)
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
        #expect(system.metrics.delivered == 10_000)
        #expect(logs.all.isEmpty)
        system.shutdown()
    }
}
