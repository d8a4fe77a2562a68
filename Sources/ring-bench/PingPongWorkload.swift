// pingpong: two actors bounce one message `size` times. Latency-bound: each round trip is
// two sends and two turns, and at most one of the two actors has work at any moment.
// Rows: "1 pair" (Swift and MN actors: the pinger awaits a call on the ponger) and
// "1 pair, fire-and-forget" (every runtime sends without waiting: MN actors with
// MNActor.tell, Swift actors with a Task per hop, FastMailbox and Dispatch as in row 1).
// Check: the ponger answered exactly `size` times and the pinger saw the last round.
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization

enum PingPongWorkload {
    enum Ball: Sendable { case ball(Int, ActorRef<Ball>) }

    static func run(_ cell: Cell) -> RunOutcome {
        let rounds = cell.size
        switch cell.runtime {
        case .fastmailbox: return fastMailbox(rounds: rounds, workers: cell.workers)
        case .sequential: return sequential(rounds: rounds, workers: cell.workers)
        case .mnActor where cell.variant.parameter == PingPongWorkload.fireAndForget:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return told(rounds: rounds) { MNTeller(executor: MNSerialExecutor(scheduler: scheduler), stopAt: $0, latch: $1) }
        case .swift where cell.variant.parameter == PingPongWorkload.fireAndForget:
            return told(rounds: rounds) { SwiftTeller(stopAt: $0, latch: $1) }
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return native(rounds: rounds, ponger: MNPonger(executor: MNSerialExecutor(scheduler: scheduler)),
                          caller: scheduler.taskExecutor)
        case .swift: return native(rounds: rounds, ponger: DefaultPonger(), caller: nil)
        case .dispatch: return dispatch(rounds: rounds)
        default: return .failed("pingpong has no \(cell.runtime) implementation")
        }
    }

    static func fastMailbox(rounds: Int, workers: Int) -> RunOutcome {
        let system = Blocking.system(workers: workers)
        defer { _ = system.shutdown() }
        let latch = Latch(1)
        let answered = Atomic<Int>(0)
        let ponger = try! system.spawn { (message: Ball, context: ActorContext<Ball>) in
            // `switch`, as the README writes a receive: an `if case` binding of a payload
            // costs a retain/release pair per message (Guarantees, "Writing receive").
            switch message {
            case .ball(let n, let from):
                answered.wrappingAdd(1, ordering: .relaxed)
                from.tell(.ball(n, context.myself))
            }
        }
        let pinger = try! system.spawn { (message: Ball, context: ActorContext<Ball>) in
            switch message {
            case .ball(let n, let from):
                if n == rounds { latch.countDown() } else { from.tell(.ball(n + 1, context.myself)) }
            }
        }
        let t0 = Clock.now()
        ponger.tell(.ball(1, pinger))
        let finished = latch.wait()
        return .timed(since: t0, operations: rounds, check: check(finished: finished, answered: answered.load(ordering: .acquiring), rounds: rounds))
    }

    static func sequential(rounds: Int, workers: Int) -> RunOutcome {
        let system = Blocking.system(workers: workers)
        defer { _ = system.shutdown() }
        let latch = Latch(1)
        let answered = Atomic<Int>(0)
        let ponger = try! system.spawn { (inbox: Inbox<Ball>) in
            for await case .ball(let n, let from) in inbox {
                answered.wrappingAdd(1, ordering: .relaxed)
                from.tell(.ball(n, inbox.myself))
            }
        }
        let pinger = try! system.spawn { (inbox: Inbox<Ball>) in
            for await case .ball(let n, let from) in inbox {
                if n == rounds { latch.countDown(); return }
                from.tell(.ball(n + 1, inbox.myself))
            }
        }
        let t0 = Clock.now()
        ponger.tell(.ball(1, pinger))
        let finished = latch.wait()
        return .timed(since: t0, operations: rounds, check: check(finished: finished, answered: answered.load(ordering: .acquiring), rounds: rounds))
    }

    static func check(finished: Bool, answered: Int, rounds: Int) -> String? {
        if !finished { return "the last round never arrived (answered \(answered) of \(rounds))" }
        if answered != rounds { return "ponger answered \(answered) times, expected \(rounds)" }
        return nil
    }

    static func native<P: Ponger>(rounds: Int, ponger: P, caller: (any TaskExecutor)?) -> RunOutcome {
        let (t0, last) = Blocking.run(on: caller) { () async -> (UInt64, Int) in
            let t0 = Clock.now()
            var last = 0
            for _ in 0..<rounds { last = await ponger.ping() }
            return (t0, last)
        }
        return .timed(since: t0, operations: rounds, check: last == rounds ? nil : "ponger counted \(last), expected \(rounds)")
    }

    /// The `parameter` of the "1 pair, fire-and-forget" row.
    static let fireAndForget = 2

    /// Fire-and-forget ping-pong between two `Teller`s made by `make(stopAt, latch)`.
    static func told<T: Teller>(rounds: Int, _ make: (Int?, Latch) -> T) -> RunOutcome {
        let latch = Latch(1)
        let pinger = make(rounds, latch), ponger = make(nil, latch)
        pinger.peer.ref = ponger
        ponger.peer.ref = pinger
        let t0 = Clock.now()
        ponger.send()
        let finished = latch.wait()
        return .timed(since: t0, operations: rounds,
                      check: check(finished: finished, answered: ponger.peer.answered.load(ordering: .acquiring), rounds: rounds))
    }

    static func dispatch(rounds: Int) -> RunOutcome {
        final class Pair: @unchecked Sendable {
            let a = DispatchQueue(label: "ping"), b = DispatchQueue(label: "pong")
            let rounds: Int, latch = Latch(1)
            var answered = 0  // only on queue b
            init(rounds: Int) { self.rounds = rounds }
            func ping(_ n: Int) { b.async { self.answered += 1; self.pong(n) } }
            func pong(_ n: Int) { a.async { n == self.rounds ? self.latch.countDown() : self.ping(n + 1) } }
        }
        let pair = Pair(rounds: rounds)
        let t0 = Clock.now()
        pair.ping(1)
        let finished = pair.latch.wait()
        return .timed(since: t0, operations: rounds, check: check(finished: finished, answered: pair.b.sync { pair.answered }, rounds: rounds))
    }
}

/// The ponger's behaviour, written once for both executors.
protocol Ponger: Actor {
    var count: Int { get set }
}

extension Ponger {
    func ping() -> Int {
        count += 1
        return count
    }
}

actor DefaultPonger: Ponger {
    var count = 0
}

actor MNPonger: Ponger {
    var count = 0
    let executor: MNSerialExecutor
    init(executor: MNSerialExecutor) { self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}

/// A fire-and-forget ping-pong player: `send()` makes the actor take the ball without the
/// caller waiting; taking it sends it back to `peer`, until the pinger got `stopAt` balls.
protocol Teller: Actor {
    nonisolated var peer: TellerPeer<Self> { get }
    nonisolated func send()
}

/// The other player, set before the first ball (then only read), and the balls answered
/// (the ponger counts them).
final class TellerPeer<T: Teller>: @unchecked Sendable {
    var ref: T?
    let answered = Atomic<Int>(0)
}

/// MN actor: each hop is an `MNActor.tell` (no Task, no allocation).
actor MNTeller: Teller, MNActor {
    nonisolated let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated let peer = TellerPeer<MNTeller>()
    let stopAt: Int?, latch: Latch
    var received = 0
    init(executor: MNSerialExecutor, stopAt: Int?, latch: Latch) { self.executor = executor; self.stopAt = stopAt; self.latch = latch }
    nonisolated func send() { tell { $0.ball() } }
    func ball() {
        received += 1
        if stopAt == nil { peer.answered.wrappingAdd(1, ordering: .relaxed) }
        if received == stopAt { latch.countDown(); return }
        peer.ref!.send()
    }
}

/// Swift actor: the only way to send without waiting is a Task per hop.
actor SwiftTeller: Teller {
    nonisolated let peer = TellerPeer<SwiftTeller>()
    let stopAt: Int?, latch: Latch
    var received = 0
    init(stopAt: Int?, latch: Latch) { self.stopAt = stopAt; self.latch = latch }
    nonisolated func send() { Task { await self.ball() } }
    func ball() {
        received += 1
        if stopAt == nil { peer.answered.wrappingAdd(1, ordering: .relaxed) }
        if received == stopAt { latch.countDown(); return }
        peer.ref!.send()
    }
}
