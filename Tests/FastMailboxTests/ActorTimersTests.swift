// context.timers: single and periodic timers by key, on virtual time under the
// DeterministicScheduler (fire times are exact), replacement and cancellation (also of a
// firing already on its way), and cancellation when the actor stops or restarts.

import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

/// What the timer test actor is asked to do, and the timer messages it gets.
enum TimerCommand: Sendable {
    case single(key: String, tag: Int, after: Duration, then: [TimerCommand] = [])
    case periodic(key: String, tag: Int, interval: Duration, initialDelay: Duration?)
    case cancel(key: String)
    case cancelAll
    case stop
    case fail
    /// A timer's message: recorded with the virtual time it arrived at. `then` runs in the
    /// same turn (to replace or cancel another timer whose firing is already queued).
    case fired(tag: Int, then: [TimerCommand])
    case isActive(key: String)
}

/// Records timer messages (tag, virtual time) and what the timer API said.
final class TimerProbe: Sendable {
    let fired = Probe<(tag: Int, at: Duration)>()
    let errors = Probe<TimerError>()
    let active = Probe<Bool>()
    let starts = Probe<Int>()
}

/// Runs TimerCommands against `context.timers`.
final class TimerActor: EventActor {
    let probe: TimerProbe
    let clock: DeterministicScheduler
    let startInPreStart: TimerCommand?
    let strategy: SupervisorStrategy
    init(probe: TimerProbe, clock: DeterministicScheduler, startInPreStart: TimerCommand? = nil,
         strategy: SupervisorStrategy = .default) {
        self.probe = probe
        self.clock = clock
        self.startInPreStart = startInPreStart
        self.strategy = strategy
    }

    var supervisorStrategy: SupervisorStrategy { strategy }

    func preStart(context: ActorContext<TimerCommand>) throws {
        probe.starts.record(0)
        if let command = startInPreStart { try receive(command, context: context) }
    }

    func receive(_ message: TimerCommand, context: ActorContext<TimerCommand>) throws {
        struct Boom: Error {}
        let timers = context.timers
        do {
            switch message {
            case .single(let key, let tag, let delay, let then):
                try timers.startSingle(key: key, message: .fired(tag: tag, then: then), after: delay)
            case .periodic(let key, let tag, let interval, let initialDelay):
                try timers.startPeriodic(key: key, message: .fired(tag: tag, then: []), interval: interval,
                                         initialDelay: initialDelay)
            case .cancel(let key): timers.cancel(key: key)
            case .cancelAll: timers.cancelAll()
            case .stop: context.stop()
            case .fail: throw Boom()
            case .fired(let tag, let then):
                probe.fired.record((tag, clock.now))
                for command in then { try receive(command, context: context) }
            case .isActive(let key): probe.active.record(timers.isActive(key: key))
            }
        } catch let error as TimerError {
            probe.errors.record(error)
        }
    }
}

@Suite("Actor timers on virtual time") struct ActorTimersTests {
    func setUp(seed: UInt64 = 1, supervisor: SupervisorStrategy = .default,
               startInPreStart: TimerCommand? = nil) throws -> (DeterministicScheduler, ActorSystem, ActorRef<TimerCommand>, TimerProbe) {
        let deterministic = DeterministicScheduler(seed: seed)
        let system = makeDeterministicSystem(deterministic, supervisor: supervisor)
        let probe = TimerProbe()
        let ref = try system.spawn(options: .named("timed")) {
            TimerActor(probe: probe, clock: deterministic, startInPreStart: startInPreStart, strategy: supervisor)
        }
        try deterministic.runUntilQuiescent()
        return (deterministic, system, ref, probe)
    }

    /// Advances virtual time by `duration` in steps of at most 100 ms, running every turn
    /// made runnable after each step, so a message is handled at the step its timer fired
    /// in (the deadlines here are multiples of 100 ms: recorded times are exact).
    func advance(_ deterministic: DeterministicScheduler, by duration: Duration) throws {
        var left = duration
        repeat {
            let step = min(left, .milliseconds(100))
            try deterministic.advanceTime(by: step)
            try deterministic.runUntilQuiescent()
            left -= step
        } while left > .zero
    }

    @Test("a single timer fires once, exactly at its deadline, and is then inactive")
    func singleFiresOnce() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "once", tag: 1, after: .seconds(2)))
        ref.tell(.isActive(key: "once"))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(1_999))
        #expect(probe.fired.count == 0)
        try advance(deterministic, by: .milliseconds(1))
        try advance(deterministic, by: .seconds(60))
        #expect(probe.fired.values.map(\.tag) == [1])
        #expect(probe.fired.values.map(\.at) == [.seconds(2)])
        ref.tell(.isActive(key: "once"))
        try deterministic.runUntilQuiescent()
        #expect(probe.active.values == [true, false])
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 0)
    }

    @Test("a zero delay delivers at the next advance, in turn")
    func zeroDelay() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "now", tag: 7, after: .zero))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .zero)
        #expect(probe.fired.values.map(\.tag) == [7])
        #expect(system.shutdown().isBalanced)
    }

    @Test("a periodic timer fires at initialDelay + k × interval until cancelled")
    func periodicFiresOnSchedule() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.periodic(key: "tick", tag: 1, interval: .seconds(1), initialDelay: .milliseconds(500)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(3_600))
        #expect(probe.fired.values.map(\.at) == [.milliseconds(500), .milliseconds(1_500), .milliseconds(2_500), .milliseconds(3_500)])
        ref.tell(.cancel(key: "tick"))
        ref.tell(.isActive(key: "tick"))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(10))
        #expect(probe.fired.count == 4)
        #expect(probe.active.values == [false])
        // The default initial delay is the interval.
        ref.tell(.periodic(key: "tick", tag: 2, interval: .seconds(2), initialDelay: nil))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(4))
        #expect(probe.fired.values.filter { $0.tag == 2 }.map(\.at) == [.milliseconds(15_600), .milliseconds(17_600)])
        #expect(system.shutdown().isBalanced)
    }

    @Test("starting a timer under a used key replaces it: only the new one delivers")
    func replacementByKey() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "k", tag: 1, after: .seconds(1)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(500))
        ref.tell(.single(key: "k", tag: 2, after: .seconds(1)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(5))
        #expect(probe.fired.values.map(\.tag) == [2])
        #expect(probe.fired.values.map(\.at) == [.milliseconds(1_500)])
        // A periodic timer replaced by a single one under the same key stops ticking.
        ref.tell(.periodic(key: "p", tag: 3, interval: .seconds(1), initialDelay: nil))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(2_500))
        ref.tell(.single(key: "p", tag: 4, after: .seconds(1)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(5))
        #expect(probe.fired.values.map(\.tag) == [2, 3, 3, 4])
        #expect(system.shutdown().isBalanced)
    }

    @Test("a firing already on its way is not delivered once its timer is replaced or cancelled")
    func inFlightFiringIsDropped() throws {
        for replace in [true, false] {
            let (deterministic, system, ref, probe) = try setUp()
            // Both fire at 1 s, "a" first (registered first); "a"'s message replaces or
            // cancels "k" in its turn, while "k"'s firing is already queued behind it.
            let then: [TimerCommand] = replace ? [.single(key: "k", tag: 3, after: .seconds(1))] : [.cancel(key: "k")]
            ref.tell(.single(key: "a", tag: 1, after: .seconds(1), then: then))
            ref.tell(.single(key: "k", tag: 2, after: .seconds(1)))
            try deterministic.runUntilQuiescent()
            #expect(try deterministic.advanceTime(by: .seconds(1)) == 2)  // both firings queued, none handled
            try deterministic.runUntilQuiescent()
            try advance(deterministic, by: .seconds(5))
            #expect(probe.fired.values.map(\.tag) == (replace ? [1, 3] : [1]), "replace \(replace)")
            if replace { #expect(probe.fired.values.last?.at == .seconds(2)) }
            #expect(system.shutdown().isBalanced)
        }
    }

    @Test("cancelAll cancels every timer, a firing on its way included")
    func cancelAll() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "a", tag: 1, after: .seconds(1), then: [.cancelAll]))
        ref.tell(.single(key: "b", tag: 2, after: .seconds(1)))
        ref.tell(.periodic(key: "c", tag: 3, interval: .milliseconds(300), initialDelay: nil))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(10))
        // c ticked at 0.3, 0.6 and 0.9 s; at 1 s a's message cancelled b (queued) and c.
        #expect(probe.fired.values.map(\.tag) == [3, 3, 3, 1])
        #expect(system.shutdown().isBalanced)
    }

    @Test("stopping the actor cancels its timers: nothing is delivered or dead-lettered afterwards")
    func stopCancels() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.periodic(key: "tick", tag: 1, interval: .seconds(1), initialDelay: nil))
        ref.tell(.single(key: "once", tag: 2, after: .seconds(3)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(1_500))
        #expect(probe.fired.values.map(\.tag) == [1])
        ref.tell(.stop)
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(10))
        #expect(probe.fired.count == 1)
        #expect(deterministic.pendingTimerCount == 0)
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 0)
    }

    @Test("a cancelled timer's entry left on the virtual clock keeps neither the timer nor the clock alive")
    func cancelledTimerHoldsNoCycle() throws {
        weak var clock: VirtualClock?
        do {
            let (deterministic, system, ref, _) = try setUp()
            clock = deterministic.engine.clock
            ref.tell(.periodic(key: "tick", tag: 1, interval: .seconds(1), initialDelay: nil))
            ref.tell(.cancel(key: "tick"))
            try deterministic.runUntilQuiescent()
            #expect(deterministic.pendingTimerCount == 1)  // the entry waits for its deadline
            _ = system.shutdown()
        }
        #expect(clock == nil)
    }

    @Test("a timer's firing queued when the actor stops is dropped, not delivered")
    func stopDropsFiringOnItsWay() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "a", tag: 1, after: .seconds(1), then: [.stop]))
        ref.tell(.single(key: "b", tag: 2, after: .seconds(1)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(2))
        #expect(probe.fired.values.map(\.tag) == [1])
        let report = system.shutdown()
        #expect(report.isBalanced && report.deadLettered == 0)
    }

    @Test("a restart cancels the failed instance's timers; the fresh one starts its own in preStart")
    func restartCancels() throws {
        let (deterministic, system, ref, probe) = try setUp(
            startInPreStart: .periodic(key: "tick", tag: 0, interval: .seconds(10), initialDelay: nil))
        ref.tell(.periodic(key: "extra", tag: 1, interval: .seconds(1), initialDelay: nil))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .milliseconds(2_500))
        #expect(probe.fired.values.map(\.tag) == [1, 1])
        ref.tell(.fail)  // restart at 2.5 s: "extra" ends, preStart's "tick" is started again
        try deterministic.runUntilQuiescent()
        #expect(probe.starts.count == 2)
        try advance(deterministic, by: .seconds(11))
        // The first instance's "tick" (due at 10 s) was cancelled: only the fresh one's, at 12.5 s.
        #expect(probe.fired.values.map(\.tag) == [1, 1, 0])
        #expect(probe.fired.values.last?.at == .milliseconds(12_500))
        #expect(system.shutdown().isBalanced)
    }

    @Test("a firing queued when the actor fails and restarts is dropped")
    func restartDropsFiringOnItsWay() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "a", tag: 1, after: .seconds(1), then: [.fail]))
        ref.tell(.single(key: "b", tag: 2, after: .seconds(1)))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(5))
        #expect(probe.fired.values.map(\.tag) == [1])
        #expect(probe.starts.count == 2)
        #expect(system.shutdown().isBalanced)
    }

    @Test("bad durations are refused with a TimerError naming them; the existing timer is kept")
    func badDurations() throws {
        let (deterministic, system, ref, probe) = try setUp()
        ref.tell(.single(key: "k", tag: 1, after: .seconds(1)))
        ref.tell(.single(key: "k", tag: 2, after: .seconds(-1)))
        ref.tell(.periodic(key: "k", tag: 3, interval: .zero, initialDelay: nil))
        ref.tell(.periodic(key: "k", tag: 4, interval: .seconds(-5), initialDelay: nil))
        ref.tell(.periodic(key: "k", tag: 5, interval: .seconds(1), initialDelay: .seconds(-1)))
        ref.tell(.single(key: "k", tag: 6, after: .seconds(Int64.max)))
        ref.tell(.periodic(key: "k", tag: 7, interval: .seconds(1e12), initialDelay: nil))
        try deterministic.runUntilQuiescent()
        #expect(probe.errors.values == [.invalidDelay(.seconds(-1)), .invalidInterval(.zero), .invalidInterval(.seconds(-5)),
                                        .invalidDelay(.seconds(-1)), .invalidDelay(.seconds(Int64.max)),
                                        .invalidInterval(.seconds(1e12))])
        #expect(probe.errors.values.first?.description.contains("-1") == true)
        try advance(deterministic, by: .seconds(2))
        #expect(probe.fired.values.map(\.tag) == [1])
        #expect(system.shutdown().isBalanced)
    }

    @Test("a closure actor's timers work the same way")
    func closureActor() throws {
        let deterministic = DeterministicScheduler(seed: 3)
        let system = makeDeterministicSystem(deterministic)
        let ticks = Probe<Duration>()
        let ref = try system.spawn { (message: String, context: ActorContext<String>) in
            switch message {
            case "start": try context.timers.startPeriodic(key: 1, message: "tick", interval: .seconds(1))
            case "tick":
                ticks.record(deterministic.now)
                if ticks.count == 3 { context.timers.cancel(key: 1) }
            default: break
            }
        }
        ref.tell("start")
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(10))
        #expect(ticks.values == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(system.shutdown().isBalanced)
    }
}

/// A value behaviour that counts its ticks in its own state and stops ticking at three.
struct TickCounter: ActorBehavior {
    let ticks: Probe<Duration>
    let clock: DeterministicScheduler
    var count = 0
    mutating func preStart(context: ActorContext<String>) throws {
        try context.timers.startPeriodic(key: "tick", message: "tick", interval: .seconds(1))
    }
    mutating func receive(_ message: String, context: ActorContext<String>) throws {
        count += 1
        ticks.record(clock.now)
        if count == 3 { context.timers.cancel(key: "tick") }
    }
}

extension ActorTimersTests {
    @Test("a value behaviour's timers work the same way")
    func valueBehaviour() throws {
        let deterministic = DeterministicScheduler(seed: 4)
        let system = makeDeterministicSystem(deterministic)
        let ticks = Probe<Duration>()
        _ = try system.spawn(TickCounter(ticks: ticks, clock: deterministic))
        try deterministic.runUntilQuiescent()
        try advance(deterministic, by: .seconds(10))
        #expect(ticks.values == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(system.shutdown().isBalanced)
    }
}

@Suite("Actor timers on a real clock", .serialized) struct ActorTimersRealClockTests {
    @Test("single and periodic timers fire on the monotonic clock, and a cancelled one stops")
    func realClock() async throws {
        let system = try makeSystem(workers: 1)
        let ticks = SignalingProbe<String>()
        let ref = try system.spawn { (message: String, context: ActorContext<String>) in
            switch message {
            case "start":
                try context.timers.startSingle(key: "once", message: "once", after: .milliseconds(5))
                try context.timers.startPeriodic(key: "tick", message: "tick", interval: .milliseconds(5))
            case "tick":
                ticks.record("tick")
                if ticks.values.filter({ $0 == "tick" }).count == 3 {
                    context.timers.cancel(key: "tick")
                    context.myself.tell("after-cancel")
                }
            default:
                ticks.record(message)
            }
        }
        ref.tell("start")
        #expect(await ticks.waitForCount(5))  // once, three ticks, the marker
        ref.tell("end")  // a tick after the cancel would come before this marker or after it
        #expect(await ticks.waitForCount(6))
        let values = ticks.values
        #expect(values.filter { $0 == "once" }.count == 1)
        #expect(Array(values.drop { $0 != "after-cancel" }).allSatisfy { $0 != "tick" })
        #expect(system.shutdown().isBalanced)
    }
}
