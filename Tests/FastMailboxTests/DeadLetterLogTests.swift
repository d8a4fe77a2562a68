import Logging
import Testing
@testable import FastMailbox
import FastMailboxTestKit

@Suite struct DeadLetterLogTests {
    private func letter(_ n: Int) -> DeadLetter {
        DeadLetter(message: n, recipient: ActorID(rawValue: 7), recipientName: "gone", reason: .recipientStopped)
    }

    @Test("within one interval the first letters of the burst are logged one by one and the rest are counted once the interval ends")
    func burstThenCount() {
        let logs = CapturedLogs()
        let log = DeadLetterLog(burst: 3, intervalNanoseconds: 1_000)
        for n in 0..<10 { log.record(letter(n), now: 100 + UInt64(n), logger: logs.logger()) }
        #expect(logs.all.map(\.message) == ["dead letter", "dead letter", "dead letter"])
        #expect(logs.all.allSatisfy { $0.level == .info })
        log.record(letter(10), now: 1_099, logger: logs.logger())  // the interval's last nanosecond
        #expect(logs.all.count == 3)
        log.record(letter(11), now: 1_100, logger: logs.logger())  // the next interval
        #expect(logs.all.map(\.message).suffix(2) == ["8 more dead letters in the last interval", "dead letter"])
        #expect(logs.all[3].metadata["deadletter/count"] == "8")
        #expect(logs.all[3].level == .info)
    }

    @Test("a dead letter's line names the recipient, the message type and the reason, never the value")
    func lineContents() throws {
        let logs = CapturedLogs()
        DeadLetterLog().record(letter(424_242), now: 0, logger: logs.logger())
        let line = try #require(logs.all.first)
        #expect(line.metadata["actor/id"] == "7")
        #expect(line.metadata["actor/name"] == "gone")
        #expect(line.metadata["message/type"] == "Int")
        #expect(line.metadata["deadletter/reason"] == "recipientStopped")
        #expect(!line.metadata.values.contains { $0.contains("424242") })
    }

    @Test("flush logs the count not yet logged, once; nothing when every letter had its line")
    func flush() {
        let logs = CapturedLogs()
        let log = DeadLetterLog(burst: 1, intervalNanoseconds: 1_000)
        log.flush(logger: logs.logger())
        #expect(logs.all.isEmpty)
        for n in 0..<5 { log.record(letter(n), now: 0, logger: logs.logger()) }
        log.flush(logger: logs.logger())
        log.flush(logger: logs.logger())
        #expect(logs.all.map(\.message) == ["dead letter", "4 more dead letters in the last interval"])
        log.record(letter(5), now: 5_000, logger: logs.logger())  // counted ones are not counted again
        #expect(logs.all.map(\.message).last == "dead letter")
        #expect(logs.all.count == 3)
    }

    @Test("an actor system logs dead letters at info, rate-limited on its scheduler's virtual clock, and counts the rest at shutdown")
    func systemLogsDeadLetters() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 5)
        let system = ActorSystem(scheduler: deterministic, logger: logs.logger(level: .info))
        let ref = try system.spawn(options: SpawnOptions(name: "gone")) { (_: Int, _) in }
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        let burst = DeadLetterLog.defaultBurst
        for n in 0..<1_000 { ref.tell(n) }
        var lines = logs.all.filter { $0.message == "dead letter" }
        #expect(lines.count == burst)
        #expect(lines.first?.level == .info)
        #expect(lines.first?.metadata["actor/name"] == "gone")
        try deterministic.advanceTime(by: .milliseconds(999))
        ref.tell(-2)  // still within the interval: counted
        #expect(logs.all.filter { $0.message == "dead letter" }.count == burst)
        try deterministic.advanceTime(by: .milliseconds(1))
        ref.tell(-1)
        lines = logs.all.filter { $0.message == "dead letter" }
        #expect(lines.count == burst + 1)
        #expect(logs.all.contains { $0.metadata["deadletter/count"] == "\(1_000 - burst + 1)" })
        for n in 0..<(burst - 1 + 5) { ref.tell(n) }  // the interval logged -1 already
        system.shutdown()
        let counts = logs.all.compactMap { $0.metadata["deadletter/count"] }
        #expect(counts == ["\(1_000 - burst + 1)", "5"])
    }

    @Test("dead letters cost no log line when the logger is above info")
    func silentAboveInfo() throws {
        let logs = CapturedLogs()
        let deterministic = DeterministicScheduler(seed: 6)
        let system = ActorSystem(scheduler: deterministic, logger: logs.logger(level: .notice))
        let ref = try system.spawn(options: SpawnOptions(name: "gone")) { (_: Int, _) in }
        ref.stop()
        try deterministic.runUntilQuiescent()
        for n in 0..<100 { ref.tell(n) }
        system.shutdown()
        #expect(!logs.all.contains { $0.message.contains("dead letter") })
    }
}
