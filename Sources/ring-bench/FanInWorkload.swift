// fanin: P senders → one receiver, `size` messages in all (size / P each). Each message
// carries its sender and sequence number. Check: the receiver saw every message, and each
// sender's messages in the order sent. FastMailbox's receiver keeps that state itself, as
// a value behaviour (ValueSink); the other runtimes share OrderCheck.
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization

enum FanInWorkload {
    struct Message: Sendable {
        var sender: Int
        var sequence: Int
    }

    /// The receiver's state: touched by one message at a time (the runtime's guarantee
    /// under test) and read after the latch (hence @unchecked). `@exclusivity(unchecked)`:
    /// the harness's own bookkeeping should not cost the Swift runtimes dynamic exclusivity
    /// checks (three per message, a visible share of a fan-in profile) that Go's
    /// receiver does not pay; every Swift runtime shares this class.
    final class OrderCheck: @unchecked Sendable {
        @exclusivity(unchecked) var next: [Int]
        @exclusivity(unchecked) var received = 0
        @exclusivity(unchecked) var disorder: String?
        let total: Int
        let latch = Latch(1)

        init(senders: Int, total: Int) {
            next = [Int](repeating: 0, count: senders)
            self.total = total
        }

        func receive(_ m: Message) {
            if m.sequence != next[m.sender], disorder == nil {
                disorder = "sender \(m.sender): got #\(m.sequence), expected #\(next[m.sender])"
            }
            next[m.sender] = m.sequence + 1
            received += 1
            if received == total { latch.countDown() }
        }

        /// A sink that keeps its own state (ValueSink) reports it here, once, at the end.
        func finish(received: Int, disorder: String?) {
            self.received = received
            self.disorder = disorder
            latch.countDown()
        }

        func check(finished: Bool) -> String? {
            if !finished { return "received \(received) of \(total)" }
            return disorder
        }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let senders = cell.variant.parameter
        let each = max(cell.size / senders, 1)
        let total = each * senders
        let state = OrderCheck(senders: senders, total: total)
        let capacity = cell.capacity ?? ActorSystem.defaultMailboxCapacity
        switch cell.runtime {
        case .fastmailbox:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let sink = try! system.spawn(options: SpawnOptions(mailboxCapacity: capacity),
                                         ValueSink(senders: senders, state: state))
            let starters = (0..<senders).map { sender in
                try! system.spawn { (_: Int, _: ActorContext<Int>) in
                    for sequence in 0..<each { sink.tell(Message(sender: sender, sequence: sequence)) }
                }
            }
            let t0 = Clock.now()
            for starter in starters { starter.tell(0) }
            let finished = state.latch.wait()
            return .timed(since: t0, operations: total, check: state.check(finished: finished),
                          extras: regime(system.metrics, total: total))
        case .sequential:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let sink = try! system.spawn(options: SpawnOptions(mailboxCapacity: capacity)) { (inbox: Inbox<Message>) in
                for await m in inbox { state.receive(m) }
            }
            let starters = (0..<senders).map { sender in
                try! system.spawn { (inbox: Inbox<Int>) in
                    _ = try await inbox.receive()
                    for sequence in 0..<each { sink.tell(Message(sender: sender, sequence: sequence)) }
                }
            }
            let t0 = Clock.now()
            for starter in starters { starter.tell(0) }
            return .timed(since: t0, operations: total, check: state.check(finished: state.latch.wait()))
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return native(MNFanInSink(state: state, executor: MNSerialExecutor(scheduler: scheduler)), state: state,
                          senders: senders, each: each, caller: scheduler.taskExecutor)
        case .swift:
            return native(DefaultFanInSink(state: state), state: state, senders: senders, each: each, caller: nil)
        case .dispatch:
            let sink = DispatchQueue(label: "sink")
            let queues = (0..<senders).map { DispatchQueue(label: "sender-\($0)") }
            let t0 = Clock.now()
            for (sender, queue) in queues.enumerated() {
                queue.async {
                    for sequence in 0..<each {
                        let m = Message(sender: sender, sequence: sequence)
                        sink.async { state.receive(m) }
                    }
                }
            }
            return .timed(since: t0, operations: total, check: state.check(finished: state.latch.wait()))
        default:
            return .failed("fanin has no \(cell.runtime) implementation")
        }
    }

    /// What tells fan-in's two regimes apart (Benchmarks/README.md, "Read"): the
    /// share of messages that went to the sink's overflow chunks (nearly all: the sink ran
    /// after the senders' turns, in a batch) and the steals (many: the sink ran beside the
    /// senders, streaming, and was taken again each time it ran dry); of those steals, the
    /// ones from a sender's long turn (Worker.swift, "Long turns"), and how often the
    /// workers parked (a second worker asleep while a long turn holds the sink).
    static func regime(_ metrics: ActorSystemMetrics, total: Int) -> [String: Double] {
        ["overflow_percent": 100 * Double(metrics.mailboxOverflows) / Double(max(total, 1)),
         "steals": Double(metrics.scheduler.steals),
         "long_turn_steals": Double(metrics.scheduler.longTurnSteals),
         "parks": Double(metrics.scheduler.parks)]
    }

    static func native<Sink: FanInSink>(_ sink: Sink, state: OrderCheck, senders: Int, each: Int, caller: (any TaskExecutor)?) -> RunOutcome {
        let t0 = Clock.now()
        Blocking.run(on: caller) {
            await withTaskGroup(of: Void.self) { group in
                for sender in 0..<senders {
                    group.addTask(executorPreference: caller) {
                        for sequence in 0..<each { await sink.receive(Message(sender: sender, sequence: sequence)) }
                    }
                }
            }
        }
        return .timed(since: t0, operations: each * senders, check: state.check(finished: state.latch.wait()))
    }
}

/// FastMailbox's sink, written as a user writes one: a value behaviour whose per-sender
/// state is its own (no exclusivity checks on it), reporting to the harness at the end.
struct ValueSink: ActorBehavior {
    var next: [Int]
    var received = 0
    var disorder: String?
    let state: FanInWorkload.OrderCheck

    init(senders: Int, state: FanInWorkload.OrderCheck) {
        next = [Int](repeating: 0, count: senders)
        self.state = state
    }

    mutating func receive(_ m: FanInWorkload.Message, context: ActorContext<FanInWorkload.Message>) {
        if m.sequence != next[m.sender], disorder == nil {
            disorder = "sender \(m.sender): got #\(m.sequence), expected #\(next[m.sender])"
        }
        next[m.sender] = m.sequence + 1
        received += 1
        if received == state.total { state.finish(received: received, disorder: disorder) }
    }
}

protocol FanInSink: Actor {
    var state: FanInWorkload.OrderCheck { get }
}

extension FanInSink {
    func receive(_ m: FanInWorkload.Message) { state.receive(m) }
}

actor DefaultFanInSink: FanInSink {
    let state: FanInWorkload.OrderCheck
    init(state: FanInWorkload.OrderCheck) { self.state = state }
}

actor MNFanInSink: FanInSink {
    let state: FanInWorkload.OrderCheck
    let executor: MNSerialExecutor
    init(state: FanInWorkload.OrderCheck, executor: MNSerialExecutor) { self.state = state; self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
