// threadring: 503 actors in a ring pass a token `size` hops (Savina "thread ring").
// The token starts at actor 0 carrying `size`; each actor counts it and passes it on with
// one less; the actor that receives 0 ends the run. Check: size + 1 deliveries in all, and
// the run ended at actor size % 503.
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization

enum ThreadRingWorkload {
    static let actors = 503

    /// Per-actor delivery counts and the actor that ended. Each slot is written by its own
    /// actor only, and every write happens-before the final latch through the token's chain
    /// of sends, so the reading thread sees them all (hence @unchecked).
    final class Tally: @unchecked Sendable {
        var counts = [Int](repeating: 0, count: ThreadRingWorkload.actors)
        var endedAt = -1
        let latch = Latch(1)

        func receive(at index: Int, token: Int) -> Bool {
            counts[index] += 1
            if token == 0 { endedAt = index; latch.countDown(); return false }
            return true
        }

        func check(hops: Int, finished: Bool) -> String? {
            if !finished { return "the token was lost (\(counts.reduce(0, +)) deliveries)" }
            let total = counts.reduce(0, +)
            if total != hops + 1 { return "\(total) deliveries, expected \(hops + 1)" }
            if endedAt != hops % ThreadRingWorkload.actors { return "ended at actor \(endedAt), expected \(hops % ThreadRingWorkload.actors)" }
            return nil
        }
    }

    /// The ring's refs, filled after spawning and read-only afterwards.
    final class Ring<Ref: Sendable>: @unchecked Sendable {
        var refs: [Ref] = []
        func next(after index: Int) -> Ref { refs[(index + 1) % refs.count] }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let hops = cell.size
        switch cell.runtime {
        case .fastmailbox:
            return fastMailboxRing(hops: hops, workers: cell.workers) { system, index, tally, ring in
                try! system.spawn { (token: Int, _: ActorContext<Int>) in
                    if tally.receive(at: index, token: token) { ring.next(after: index).tell(token - 1) }
                }
            }
        case .sequential:
            return fastMailboxRing(hops: hops, workers: cell.workers) { system, index, tally, ring in
                try! system.spawn { (inbox: Inbox<Int>) in
                    for await token in inbox {
                        if tally.receive(at: index, token: token) { ring.next(after: index).tell(token - 1) }
                    }
                }
            }
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            return native(hops: hops, caller: scheduler.taskExecutor) { MNRingNode(index: $0, tally: $1, executor: MNSerialExecutor(scheduler: scheduler)) }
        case .swift:
            return native(hops: hops, caller: nil) { DefaultRingNode(index: $0, tally: $1) }
        case .dispatch:
            let tally = Tally()
            let queues = (0..<actors).map { DispatchQueue(label: "ring-\($0)") }
            @Sendable func pass(_ index: Int, _ token: Int) {
                queues[index].async {
                    if tally.receive(at: index, token: token) { pass((index + 1) % actors, token - 1) }
                }
            }
            let t0 = Clock.now()
            pass(0, hops)
            let finished = tally.latch.wait()
            return .timed(since: t0, operations: hops, check: tally.check(hops: hops, finished: finished))
        default:
            return .failed("threadring has no \(cell.runtime) implementation")
        }
    }

    /// FastMailbox event or sequential actors in a ring of `actors`, each made by `spawn`
    /// (given its index, the tally and the ring to pass the token on).
    static func fastMailboxRing(hops: Int, workers: Int,
                                spawn: (ActorSystem, Int, Tally, Ring<ActorRef<Int>>) -> ActorRef<Int>) -> RunOutcome {
        let system = Blocking.system(workers: workers)
        defer { _ = system.shutdown() }
        let tally = Tally(), ring = Ring<ActorRef<Int>>()
        for index in 0..<actors { ring.refs.append(spawn(system, index, tally, ring)) }
        let t0 = Clock.now()
        ring.refs[0].tell(hops)
        let finished = tally.latch.wait()
        return .timed(since: t0, operations: hops, check: tally.check(hops: hops, finished: finished))
    }

    static func native<Node: RingNode>(hops: Int, caller: (any TaskExecutor)?, make: (Int, Tally) -> Node) -> RunOutcome {
        let tally = Tally()
        let nodes = (0..<actors).map { make($0, tally) }
        for (index, node) in nodes.enumerated() { node.link(nodes[(index + 1) % actors], caller: caller) }
        let t0 = Clock.now()
        Task(executorPreference: caller) { await nodes[0].pass(hops) }
        let finished = tally.latch.wait()
        return .timed(since: t0, operations: hops, check: tally.check(hops: hops, finished: finished))
    }
}

/// A ring member as a native actor. A Swift actor has no fire-and-forget send, so each hop
/// starts a task that awaits the next member (on `caller`, MNTaskExecutor for MN actors).
protocol RingNode: Actor {
    var index: Int { get }
    var tally: ThreadRingWorkload.Tally { get }
    var next: Self? { get set }
    var caller: (any TaskExecutor)? { get set }
}

extension RingNode {
    nonisolated func link(_ next: Self, caller: (any TaskExecutor)?) {
        // Runs before any message: a blocking hop into the actor to set its neighbour.
        Blocking.run { await self.setNext(next, caller: caller) }
    }

    func setNext(_ next: Self, caller: (any TaskExecutor)?) {
        self.next = next
        self.caller = caller
    }

    func pass(_ token: Int) {
        guard tally.receive(at: index, token: token), let next else { return }
        Task(executorPreference: caller) { await next.pass(token - 1) }
    }
}

actor DefaultRingNode: RingNode {
    let index: Int
    let tally: ThreadRingWorkload.Tally
    var next: DefaultRingNode?
    var caller: (any TaskExecutor)?
    init(index: Int, tally: ThreadRingWorkload.Tally) { self.index = index; self.tally = tally }
}

actor MNRingNode: RingNode {
    let index: Int
    let tally: ThreadRingWorkload.Tally
    var next: MNRingNode?
    var caller: (any TaskExecutor)?
    let executor: MNSerialExecutor
    init(index: Int, tally: ThreadRingWorkload.Tally, executor: MNSerialExecutor) {
        self.index = index; self.tally = tally; self.executor = executor
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
