import FastMailbox
import FastMailboxTestKit
import Testing

/// A probe on a fresh deterministic system; the system is shut down by the caller.
private func makeProbe<M: Sendable>(_ type: M.Type = M.self, seed: UInt64 = 1)
    throws -> (DeterministicScheduler, ActorSystem, TestProbe<M>)
{
    let scheduler = DeterministicScheduler(seed: seed)
    let system = ActorSystem(name: "probe-test", scheduler: scheduler)
    return (scheduler, system, try TestProbe<M>(in: system))
}

/// Asks `ref` from a task on the deterministic scheduler and tells `probe` the outcome:
/// the reply, or "timed out" (a message caused by a virtual-time timer).
private func askAndReport(_ ref: ActorRef<ActorRef<Int>>, timeout: Duration, to probe: ActorRef<String>,
                          on scheduler: DeterministicScheduler) {
    Task(executorPreference: scheduler.taskExecutor) {
        do {
            let reply = try await ref.ask(timeout: timeout) { $0 }
            probe.tell("reply \(reply)")
        } catch {
            probe.tell("timed out")
        }
    }
}

/// What an expectation on `probe` did: "drove", "refused" (already driving) or the error.
private func expectationOutcome(_ probe: TestProbe<Int>) -> String {
    do {
        try probe.expectMessage(within: .seconds(1))
        return "drove"
    } catch {
        guard case .scheduler(let schedulerError) = error, case .alreadyDriving = schedulerError else { return "\(error)" }
        return "refused"
    }
}

/// The counter of the Deterministic testing article.
private enum CounterMessage: Sendable { case add(Int), get(replyTo: ActorRef<Int>) }

private final class Counter: EventActor {
    var total = 0
    func receive(_ message: CounterMessage, context: ActorContext<CounterMessage>) {
        switch message {
        case .add(let n): total += n
        case .get(let replyTo): replyTo.tell(total)
        }
    }
}

@Suite("TestProbe") struct TestProbeTests {
    @Test("the documentation's examples run as written", arguments: [UInt64(0), 7, 42])
    func documentationExamples(seed: UInt64) throws {
        // FastMailboxTestKit.md
        do {
            let scheduler = DeterministicScheduler(seed: 7)
            let system = ActorSystem(scheduler: scheduler)
            defer { system.shutdown() }
            let probe = try TestProbe<String>(in: system)
            let greeter = try system.spawn(of: String.self) { name, _ in
                probe.ref.tell("hello, \(name)")
            }
            greeter.tell("Ada")
            try probe.expectMessage("hello, Ada")
            try probe.expectNoMessage(within: .seconds(1))
        }
        // DeterministicTesting.md, "Expecting messages: TestProbe"
        let scheduler = DeterministicScheduler(seed: seed)
        let system = ActorSystem(scheduler: scheduler)
        defer { system.shutdown() }
        let probe = try TestProbe<Int>(in: system)
        let counter = try system.spawn { Counter() }
        for n in 1...100 { counter.tell(.add(n)) }
        counter.tell(.get(replyTo: probe.ref))
        try probe.expectMessage(5050)
        try probe.expectNoMessage(within: .seconds(10))
        counter.stop()
        try probe.expectTerminated(counter)
    }

    @Test("expectMessage returns messages in the order received and checks an expected value")
    func expectMessageInOrder() throws {
        let (_, system, probe) = try makeProbe(Int.self)
        defer { system.shutdown() }
        let doubler = try system.spawn { (n: Int, _: ActorContext<Int>) in probe.ref.tell(n * 2) }
        for n in 1...3 { doubler.tell(n) }
        #expect(try probe.expectMessage() == 2)
        try probe.expectMessage(4)
        #expect(throws: TestProbeError.self) { try probe.expectMessage(7) }  // 6 arrived: taken all the same
        #expect(probe.receivedCount == 0)
    }

    @Test("expectMessage that nothing answers fails after exactly its virtual time, with no real wait")
    func expectMessageTimesOutInVirtualTime() throws {
        let (scheduler, system, probe) = try makeProbe(String.self)
        defer { system.shutdown() }
        do {
            try probe.expectMessage(within: .seconds(30))
            Issue.record("a message arrived from nowhere")
        } catch {
            guard case .timedOut(_, let within) = error else { Issue.record("\(error)"); return }
            #expect(within == .seconds(30))
        }
        #expect(scheduler.now == .seconds(30))
    }

    @Test("a message a timer causes arrives at its virtual time: not within 1 s, within 2 s")
    func messageFromATimer() throws {
        let (scheduler, system, probe) = try makeProbe(String.self)
        defer { system.shutdown() }
        let silent = try system.spawn { (_: ActorRef<Int>, _: ActorContext<ActorRef<Int>>) in }  // never replies
        askAndReport(silent, timeout: .seconds(2), to: probe.ref, on: scheduler)
        #expect(throws: TestProbeError.self) { try probe.expectMessage(within: .seconds(1)) }
        #expect(scheduler.now == .seconds(1))
        try probe.expectMessage("timed out", within: .seconds(5))
        #expect(scheduler.now == .seconds(2), "the expectation returns at the timer's time, not at its limit")
    }

    @Test("expectNoMessage passes over quiet virtual time and fails on a message, naming it")
    func expectNoMessage() throws {
        let (scheduler, system, probe) = try makeProbe(String.self)
        defer { system.shutdown() }
        try probe.expectNoMessage(within: .seconds(10))
        #expect(scheduler.now == .seconds(10))
        let echo = try system.spawn { (_: ActorRef<Int>, _: ActorContext<ActorRef<Int>>) in }
        askAndReport(echo, timeout: .seconds(3), to: probe.ref, on: scheduler)
        do {
            try probe.expectNoMessage(within: .seconds(5))
            Issue.record("the timed-out ask's message was not seen")
        } catch {
            guard case .unexpectedMessage(let message, _) = error else { Issue.record("\(error)"); return }
            #expect(message == "timed out")
        }
    }

    @Test("fishForMessage skips what it continues on, returns what completes, and reports a failure")
    func fishForMessage() throws {
        let (_, system, probe) = try makeProbe(Int.self)
        defer { system.shutdown() }
        for n in [1, 3, 4, 5, -1] { probe.ref.tell(n) }
        let even = try probe.fishForMessage { $0.isMultiple(of: 2) ? .complete : .continue }
        #expect(even == 4)
        do {
            try probe.fishForMessage { $0 < 0 ? .fail("negative") : .continue }
            Issue.record("fishing did not fail")
        } catch {
            guard case .fishingFailed(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason == "-1: negative")
        }
        #expect(throws: TestProbeError.self) { try probe.fishForMessage(within: .seconds(1)) { _ in .complete } }
    }

    @Test("expectTerminated reports an actor's stop, an earlier stop at once, and times out on a live actor")
    func expectTerminated() throws {
        let (_, system, probe) = try makeProbe(Int.self)
        defer { system.shutdown() }
        let worker = try system.spawn(options: .named("worker")) { (n: Int, context: ActorContext<Int>) in
            if n == 0 { context.stop() }
        }
        #expect(throws: TestProbeError.self) { try probe.expectTerminated(worker, within: .seconds(1)) }
        worker.tell(0)
        let terminated = try probe.expectTerminated(worker)
        #expect(terminated.id == worker.id && terminated.reason == .stopped)

        let early = try system.spawn(options: .named("early")) { (_: Int, _: ActorContext<Int>) in }
        early.stop()
        #expect(try probe.expectTerminated(early).name == "early")
    }

    @Test("a probe needs a system on a DeterministicScheduler")
    func refusesARealScheduler() throws {
        let system = try ActorSystem(name: "real", configuration: SchedulerConfiguration(workers: 1))
        defer { system.shutdown() }
        do {
            _ = try TestProbe<Int>(in: system)
            Issue.record("a probe was made on a real scheduler")
        } catch {
            guard case .notDeterministic(let name) = error else { Issue.record("\(error)"); return }
            #expect(name == "real")
        }
    }

    @Test("an expectation from inside a turn is refused, not a deadlock")
    func expectationInsideATurn() throws {
        let (_, system, probe) = try makeProbe(Int.self)
        defer { system.shutdown() }
        let outcome = try TestProbe<String>(in: system)  // a second unnamed probe on the same system
        let nested = try system.spawn { (_: Int, _: ActorContext<Int>) in
            outcome.ref.tell(expectationOutcome(probe))
        }
        nested.tell(1)
        try outcome.expectMessage("refused")
    }
}
