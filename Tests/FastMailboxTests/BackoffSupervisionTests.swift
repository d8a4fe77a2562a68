// Restart with exponential back-off (SupervisorStrategy.restartWithBackoff) on virtual
// time: the delays (minimum, doubling, maximum, random factor replayed by seed, reset),
// messages kept in order while a restart waits, a stop during the wait, and the resume
// directive keeping the actor's state.

import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

enum BackoffCommand: Sendable { case fail, work(Int), stop }

/// Records when each instance started (virtual time) and which instance handled what.
final class BackoffProbe: Sendable {
    let starts = Probe<Duration>()
    let handled = Probe<(instance: Int, value: Int)>()
    let postStops = Probe<Int>()
}

final class FragileActor: EventActor {
    struct Boom: Error {}
    let probe: BackoffProbe
    let clock: DeterministicScheduler
    let instance: Int
    init(probe: BackoffProbe, clock: DeterministicScheduler) {
        self.probe = probe
        self.clock = clock
        self.instance = probe.starts.count
    }
    func preStart(context: ActorContext<BackoffCommand>) { probe.starts.record(clock.now) }
    func postStop(context: ActorContext<BackoffCommand>) { probe.postStops.record(instance) }
    func receive(_ message: BackoffCommand, context: ActorContext<BackoffCommand>) throws {
        switch message {
        case .fail: throw Boom()
        case .work(let value): probe.handled.record((instance, value))
        case .stop: context.stop()
        }
    }
}

@Suite("Back-off supervision") struct BackoffSupervisionTests {
    func setUp(_ strategy: SupervisorStrategy, seed: UInt64 = 1, throughput: Int = 1)
        throws -> (DeterministicScheduler, ActorSystem, ActorRef<BackoffCommand>, BackoffProbe) {
        let deterministic = DeterministicScheduler(seed: seed, throughput: throughput)
        let system = makeDeterministicSystem(deterministic)
        let probe = BackoffProbe()
        let ref = try system.spawn(options: SpawnOptions(name: "fragile", supervisor: strategy)) { FragileActor(probe: probe, clock: deterministic) }
        try deterministic.runUntilQuiescent()
        return (deterministic, system, ref, probe)
    }

    /// Fails the actor each time a fresh instance has started, `failures` times, advancing
    /// virtual time in 1 ms steps; returns the start times.
    func failRepeatedly(_ failures: Int, _ deterministic: DeterministicScheduler, _ ref: ActorRef<BackoffCommand>,
                        _ probe: BackoffProbe) throws -> [Duration] {
        for _ in 0..<failures {
            let started = probe.starts.count
            ref.tell(.fail)
            try deterministic.runUntilQuiescent()
            while probe.starts.count == started {
                try deterministic.advanceTime(by: .milliseconds(1))
                try deterministic.runUntilQuiescent()
            }
        }
        return probe.starts.values
    }

    @Test("delays start at the minimum, double, and stop at the maximum")
    func delaysDoubleUpToTheMaximum() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .milliseconds(100), maximum: .milliseconds(700),
                                                                 randomFactor: 0, resetAfter: .seconds(60))
        let (deterministic, system, ref, probe) = try setUp(strategy)
        let starts = try failRepeatedly(5, deterministic, ref, probe)
        // Failures come right after each start: delays 100, 200, 400, 700 (capped), 700 ms.
        #expect(starts == [.zero, .milliseconds(100), .milliseconds(300), .milliseconds(700), .milliseconds(1_400),
                           .milliseconds(2_100)])
        #expect(system.metrics.restarts == 5)
        #expect(system.shutdown().isBalanced)
    }

    @Test("the fresh instance does not start before the delay has passed")
    func noEarlyStart() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .seconds(1), maximum: .seconds(10), randomFactor: 0)
        let (deterministic, system, ref, probe) = try setUp(strategy)
        ref.tell(.fail)
        try deterministic.runUntilQuiescent()
        try deterministic.advanceTime(by: .milliseconds(999))
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.count == 1)
        try deterministic.advanceTime(by: .milliseconds(1))
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.values == [.zero, .seconds(1)])
        #expect(system.shutdown().isBalanced)
    }

    @Test("the random factor stays within its bounds and replays with the seed")
    func randomFactorReplays() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .milliseconds(100), maximum: .milliseconds(800),
                                                                 randomFactor: 0.5, resetAfter: .seconds(60))
        func run(seed: UInt64) throws -> [Duration] {
            let (deterministic, system, ref, probe) = try setUp(strategy, seed: seed)
            let starts = try failRepeatedly(6, deterministic, ref, probe)
            #expect(system.shutdown().isBalanced)
            return zip(starts.dropFirst(), starts).map { $0 - $1 }
        }
        let first = try run(seed: 7)
        #expect(try run(seed: 7) == first)
        let bases: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                 .milliseconds(800), .milliseconds(800)]
        for (delay, base) in zip(first, bases) {
            // 1 ms steps: a start is seen within 1 ms after its deadline.
            #expect(delay >= base && delay <= base * 1.5 + .milliseconds(1), "delay \(delay), base \(base)")
        }
        var others: [[Duration]] = []
        for seed: UInt64 in 8...10 { others.append(try run(seed: seed)) }
        #expect(others.contains { $0 != first }, "the random factor changed nothing across seeds")
    }

    @Test("the delay formula: min(maximum, minimum × 2ⁿ) × (1 + r × randomFactor)")
    func delayFormula() throws {
        let backoff = try #require(try SupervisorStrategy.restartWithBackoff(
            minimum: .milliseconds(10), maximum: .seconds(1), randomFactor: 0.2).backoff)
        #expect(backoff.delayNanoseconds(attempt: 0, unit: 0) == 10_000_000)
        #expect(backoff.delayNanoseconds(attempt: 3, unit: 0) == 80_000_000)
        #expect(backoff.delayNanoseconds(attempt: 7, unit: 0) == 1_000_000_000)
        #expect(backoff.delayNanoseconds(attempt: Int.max, unit: 0) == 1_000_000_000)
        #expect(backoff.delayNanoseconds(attempt: 1, unit: 0.5) == 22_000_000)
        #expect(backoff.resetAfter == .seconds(1))  // default: the maximum
    }

    @Test("the doubling starts over after a run of resetAfter without failure")
    func resetAfterQuietRun() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .milliseconds(100), maximum: .seconds(10),
                                                                 randomFactor: 0, resetAfter: .seconds(5))
        let (deterministic, system, ref, probe) = try setUp(strategy)
        _ = try failRepeatedly(3, deterministic, ref, probe)  // delays 100, 200, 400 ms: started at 700 ms
        try deterministic.advanceTime(by: .seconds(5))  // a quiet run of resetAfter
        let starts = try failRepeatedly(1, deterministic, ref, probe)
        #expect(starts.last! - (.milliseconds(700) + .seconds(5)) == .milliseconds(100))
        #expect(system.shutdown().isBalanced)
    }

    @Test("messages that arrive during the delay wait, in order, for the fresh instance")
    func messagesWaitInOrder() throws {
        for throughput in [1, 16] {
            let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .seconds(1), maximum: .seconds(10), randomFactor: 0)
            let (deterministic, system, ref, probe) = try setUp(strategy, throughput: throughput)
            // With throughput 16 the messages behind the failing one are taken in its pass.
            ref.tell(.fail)
            for value in 1...3 { ref.tell(.work(value)) }
            try deterministic.runUntilQuiescent()
            for value in 4...6 { ref.tell(.work(value)) }
            try deterministic.runUntilQuiescent()
            #expect(probe.handled.count == 0, "throughput \(throughput)")
            try deterministic.advanceTime(by: .milliseconds(999))
            try deterministic.runUntilQuiescent()
            #expect(probe.handled.count == 0, "throughput \(throughput)")
            try deterministic.advanceTime(by: .milliseconds(1))
            try deterministic.runUntilQuiescent()
            #expect(probe.handled.values.map(\.value) == Array(1...6), "throughput \(throughput)")
            #expect(probe.handled.values.allSatisfy { $0.instance == 1 }, "throughput \(throughput)")
            let report = system.shutdown()
            #expect(report.isBalanced && report.deadLettered == 0 && report.delivered == 7, "throughput \(throughput)")
        }
    }

    @Test("a stop during the delay stops at once: postStop ran once per instance, waiting messages are dead letters")
    func stopDuringDelay() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .seconds(1), maximum: .seconds(10), randomFactor: 0)
        let (deterministic, system, ref, probe) = try setUp(strategy)
        ref.tell(.fail)
        ref.tell(.work(1))
        ref.tell(.work(2))
        try deterministic.runUntilQuiescent()
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(system.lookup("fragile", as: BackoffCommand.self) == nil)
        try deterministic.advanceTime(by: .seconds(5))
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.count == 1)
        #expect(probe.postStops.values == [0])
        #expect(probe.handled.count == 0)
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 2)
    }

    @Test("a watched actor's termination during the delay reaches the fresh instance after its preStart")
    func terminationDuringDelay() throws {
        enum WatcherMessage: Sendable { case watch(ActorRef<Int>), fail, peerStopped }
        final class Watcher: EventActor {
            let log: Probe<String>
            let instance: Int
            init(log: Probe<String>, instance: Int) { self.log = log; self.instance = instance }
            func preStart(context: ActorContext<WatcherMessage>) { log.record("start \(instance)") }
            func receive(_ message: WatcherMessage, context: ActorContext<WatcherMessage>) throws {
                switch message {
                case .watch(let peer): context.watch(peer, with: .peerStopped)
                case .fail: throw FragileActor.Boom()
                case .peerStopped: log.record("peer stopped, seen by \(instance)")
                }
            }
        }
        let deterministic = DeterministicScheduler(seed: 6)
        let system = makeDeterministicSystem(deterministic)
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .seconds(1), maximum: .seconds(1), randomFactor: 0)
        let log = Probe<String>()
        let instances = Probe<Int>()
        let peer = try system.spawn { (_: Int, _) in }
        let watcher = try system.spawn(options: SpawnOptions(supervisor: strategy)) { () -> Watcher in
            instances.record(0)
            return Watcher(log: log, instance: instances.count)
        }
        watcher.tell(.watch(peer))
        watcher.tell(.fail)
        try deterministic.runUntilQuiescent()
        peer.stop()
        try deterministic.runUntilQuiescent()
        #expect(log.values == ["start 1"])
        try deterministic.advanceTime(by: .seconds(1))
        try deterministic.runUntilQuiescent()
        #expect(log.values == ["start 1", "start 2", "peer stopped, seen by 2"])
        #expect(system.shutdown().isBalanced)
    }

    @Test("maxRestarts still bounds back-off restarts")
    func budgetStillApplies() throws {
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .milliseconds(10), maximum: .milliseconds(10),
                                                                 randomFactor: 0, maxRestarts: 2, within: .seconds(60))
        let (deterministic, system, ref, probe) = try setUp(strategy)
        _ = try failRepeatedly(2, deterministic, ref, probe)
        ref.tell(.fail)
        try deterministic.runUntilQuiescent()
        #expect(system.lookup("fragile", as: BackoffCommand.self) == nil)
        #expect(probe.starts.count == 3)
        #expect(system.shutdown().isBalanced)
    }

    @Test("bad back-off settings are refused with an error naming them")
    func badSettings() {
        func error(_ make: () throws(SupervisorStrategy.ConfigurationError) -> SupervisorStrategy) -> SupervisorStrategy.ConfigurationError? {
            do { _ = try make(); return nil } catch { return error }
        }
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .zero, maximum: .seconds(1), randomFactor: 0) } == .nonPositiveMinimum(.zero))
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(2), maximum: .seconds(1), randomFactor: 0) }
            == .maximumBelowMinimum(minimum: .seconds(2), maximum: .seconds(1)))
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(1), maximum: .seconds(Int64.max), randomFactor: 0) }
            == .maximumTooLong(.seconds(Int64.max)))
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(1), maximum: .seconds(2), randomFactor: 1.5) } == .randomFactorOutOfRange(1.5))
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(1), maximum: .seconds(2), randomFactor: .nan) } != nil)
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(1), maximum: .seconds(2), randomFactor: 0, resetAfter: .seconds(-1)) }
            == .negativeResetAfter(.seconds(-1)))
        #expect(error { () throws(SupervisorStrategy.ConfigurationError) in
            try .restartWithBackoff(minimum: .seconds(1), maximum: .seconds(2), randomFactor: 0, maxRestarts: -1) }
            == .negativeMaxRestarts(-1))
        #expect(SupervisorStrategy.ConfigurationError.randomFactorOutOfRange(1.5).description.contains("1.5"))
    }

    @Test("resume keeps the instance and its state; the failing message counts as delivered")
    func resumeKeepsState() throws {
        let deterministic = DeterministicScheduler(seed: 4)
        let system = makeDeterministicSystem(deterministic)
        let probe = BackoffProbe()
        let ref = try system.spawn(options: SpawnOptions(supervisor: .resume)) { FragileActor(probe: probe, clock: deterministic) }
        ref.tell(.work(1))
        ref.tell(.fail)
        ref.tell(.work(2))
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.count == 1)
        #expect(probe.postStops.count == 0)
        #expect(probe.handled.values.map(\.value) == [1, 2])
        #expect(system.metrics.restarts == 0)
        let counter = try system.spawn(options: SpawnOptions(supervisor: .resume)) { () -> ClosureActor<Int> in
            var total = 0  // the instance's state
            return ClosureActor { (n: Int, _) in
                if n < 0 { throw FragileActor.Boom() }
                total += n
                probe.handled.record((9, total))
            }
        }
        for n in [5, -1, 7] { counter.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(probe.handled.values.filter { $0.instance == 9 }.map(\.value) == [5, 12])
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 0 && report.delivered == 6)
    }

    @Test("the default strategy restarts at once, 10 times within 60 s, then stops")
    func defaultLimits() throws {
        #expect(SupervisorStrategy.default.maxRestarts == 10)
        #expect(SupervisorStrategy.default.window == .seconds(60))
        #expect(SupervisorStrategy.default.backoff == nil)
        let (deterministic, system, ref, probe) = try setUp(.default)
        for _ in 0..<11 { ref.tell(.fail) }
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.values == Array(repeating: .zero, count: 11))
        #expect(system.lookup("fragile", as: BackoffCommand.self) == nil)
        #expect(system.shutdown().isBalanced)
    }
}

@Suite("Back-off supervision on a real clock", .serialized) struct BackoffRealClockTests {
    @Test("a back-off restart on the monotonic clock starts the fresh instance, which gets the waiting messages")
    func realClock() throws {
        let system = try makeSystem(workers: 1)
        let strategy = try SupervisorStrategy.restartWithBackoff(minimum: .milliseconds(5), maximum: .milliseconds(20),
                                                                 randomFactor: 0.5)
        let handled = SignalingProbe<String>()
        let ref = try system.spawn(options: SpawnOptions(supervisor: strategy)) { () -> ClosureActor<Int> in
            handled.record("start")
            return ClosureActor { (n: Int, _) in
                if n < 0 { throw FragileActor.Boom() }
                handled.record("\(n)")
            }
        }
        ref.tell(-1)
        for n in 1...3 { ref.tell(n) }
        #expect(handled.waitForCount(5))
        #expect(handled.values == ["start", "start", "1", "2", "3"])
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 0)
    }
}
