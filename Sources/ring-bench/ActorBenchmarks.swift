// The actor table: FastMailbox actors side by side with Swift's own actors and Dispatch
// serial queues, in the same run, swept over workers, producers and mailbox ring sizes.
//
//  ping-pong   one pair, request → reply, N round trips (latency-bound).
//              FastMailbox: two actors telling each other. Swift: a task awaiting a method
//              of a default actor. Dispatch: two serial queues async-ing to each other.
//  pairs       64 ping-pong pairs at once (throughput, scales with workers).
//  fan-in      P producer threads each send M messages to one counting receiver.
//              FastMailbox: tell. Swift: P tasks awaiting `add` on one actor.
//              Dispatch: P threads `async` onto one serial queue.
//  ring size   fan-in with P = 2 over mailbox capacities 4 … 1024.
//  memory      heap bytes per idle actor (mallinfo2 before/after spawning 10,000), and
//              after each has received one message (its ring is then allocated).
import Foundation
import Synchronization
import FastMailbox
import MNScheduler
import CConcurrencyKit

enum ActorBenchmarks {
    /// Waits for `count` completions.
    final class Latch: Sendable {
        let remaining: Atomic<Int>
        let semaphore = DispatchSemaphore(value: 0)
        init(_ count: Int) { remaining = Atomic(count) }
        func countDown(_ n: Int = 1) {
            if remaining.wrappingSubtract(n, ordering: .acquiringAndReleasing).newValue == 0 { semaphore.signal() }
        }
        func wait() { semaphore.wait() }
    }

    static func system(workers: Int) -> ActorSystem {
        var configuration = SchedulerConfiguration()
        configuration.workers = workers
        return try! ActorSystem(name: "bench", configuration: configuration)
    }

    // MARK: FastMailbox

    enum Ball: Sendable { case ball(Int, ActorRef<Ball>) }

    /// `pairs` ping-pong pairs, `rounds` round trips each. Returns round trips / s.
    static func fastPingPong(workers: Int, pairs: Int, rounds: Int) -> Double {
        let system = system(workers: workers)
        defer { system.shutdown() }
        let latch = Latch(pairs)
        var starters: [(ActorRef<Ball>, ActorRef<Ball>)] = []
        for _ in 0..<pairs {
            let ponger = try! system.spawn { (m: Ball, context: ActorContext<Ball>) in
                if case .ball(let n, let from) = m { from.tell(.ball(n, context.myself)) }
            }
            let pinger = try! system.spawn { (m: Ball, context: ActorContext<Ball>) in
                if case .ball(let n, let from) = m {
                    if n == rounds { latch.countDown() } else { from.tell(.ball(n + 1, context.myself)) }
                }
            }
            starters.append((pinger, ponger))
        }
        let t0 = Measure.now()
        for (pinger, ponger) in starters { ponger.tell(.ball(1, pinger)) }
        latch.wait()
        return Double(pairs * rounds) / (Double(Measure.now() - t0) / 1e9)
    }

    /// `producers` threads × `perProducer` tells into one actor. Returns messages / s.
    static func fastFanIn(workers: Int, producers: Int, perProducer: Int, capacity: Int) -> Double {
        let system = system(workers: workers)
        defer { system.shutdown() }
        let total = producers * perProducer
        let latch = Latch(1)
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        let sink = try! system.spawn(mailboxCapacity: capacity) { (_: Int, _) in
            count.n += 1
            if count.n == total { latch.countDown() }
        }
        let t0 = startProducers(producers) { for i in 0..<perProducer { sink.tell(i) } }
        latch.wait()
        return Double(total) / (Double(Measure.now() - t0) / 1e9)
    }

    /// Starts `count` producer threads running `body` from a common start line; returns the
    /// start time.
    static func startProducers(_ count: Int, _ body: @escaping @Sendable () -> Void) -> UInt64 {
        let start = MailboxBenchmarks.StartLine(parties: count + 1)
        for _ in 0..<count {
            Thread {
                start.wait()
                body()
            }.start()
        }
        return start.releaseAndStartClock()
    }

    // MARK: Swift actors

    actor SwiftPonger {
        var n = 0
        func ping() -> Int { n += 1; return n }
    }

    static func blocking(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task { await body(); done.signal() }
        done.wait()
    }

    static func swiftPingPong(pairs: Int, rounds: Int) -> Double {
        let t0 = Measure.now()
        blocking {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<pairs {
                    group.addTask {
                        let ponger = SwiftPonger()
                        for _ in 0..<rounds { _ = await ponger.ping() }
                    }
                }
            }
        }
        return Double(pairs * rounds) / (Double(Measure.now() - t0) / 1e9)
    }

    static func swiftFanIn(producers: Int, perProducer: Int) -> Double {
        let sink = SwiftPonger()
        let t0 = Measure.now()
        blocking {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<producers {
                    group.addTask { for _ in 0..<perProducer { _ = await sink.ping() } }
                }
            }
        }
        return Double(producers * perProducer) / (Double(Measure.now() - t0) / 1e9)
    }

    // MARK: Dispatch

    static func dispatchPingPong(pairs: Int, rounds: Int) -> Double {
        let latch = Latch(pairs)
        final class Pair: @unchecked Sendable {
            let a = DispatchQueue(label: "a"), b = DispatchQueue(label: "b")
            let rounds: Int, latch: Latch
            init(rounds: Int, latch: Latch) { self.rounds = rounds; self.latch = latch }
            func ping(_ n: Int) { b.async { self.pong(n) } }
            func pong(_ n: Int) { a.async { n == self.rounds ? self.latch.countDown() : self.ping(n + 1) } }
        }
        let all = (0..<pairs).map { _ in Pair(rounds: rounds, latch: latch) }
        let t0 = Measure.now()
        for pair in all { pair.a.async { pair.ping(1) } }
        latch.wait()
        return Double(pairs * rounds) / (Double(Measure.now() - t0) / 1e9)
    }

    static func dispatchFanIn(producers: Int, perProducer: Int) -> Double {
        let queue = DispatchQueue(label: "sink")
        let total = producers * perProducer
        let latch = Latch(1)
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        let t0 = startProducers(producers) {
            for _ in 0..<perProducer { queue.async { count.n += 1; if count.n == total { latch.countDown() } } }
        }
        latch.wait()
        return Double(total) / (Double(Measure.now() - t0) / 1e9)
    }

    // MARK: memory

    static func heapInUse() -> Int { Int(mallinfo2().uordblks) }

    static func actorMemory(count: Int) -> (idle: Double, afterOneMessage: Double) {
        let system = system(workers: 1)
        defer { system.shutdown() }
        let before = heapInUse()
        var refs: [ActorRef<Int>] = []
        refs.reserveCapacity(count)
        let arrayBytes = heapInUse() - before
        let latch = Latch(count)
        for _ in 0..<count { refs.append(try! system.spawn { (_: Int, _) in latch.countDown() }) }
        while system.scheduler.isShutDown == false, system.statistics.liveActors < count { usleep(100) }
        usleep(20_000)  // let every actor's start turn finish
        let idle = Double(heapInUse() - before - arrayBytes) / Double(count)
        for ref in refs { ref.tell(1) }
        latch.wait()
        let active = Double(heapInUse() - before - arrayBytes) / Double(count)
        return (idle, active)
    }

    // MARK: table

    /// One comparison group: Swift and Dispatch once (their own pools), FastMailbox with 1
    /// and 2 workers; a row per worker count and the ratios measured in the same run.
    static func compare(into table: inout BenchTable, label: String, runs: Int,
                        swift: () -> Double, dispatch: () -> Double, fast: (Int) -> Double) {
        let swiftRate = Measure.medianRate(runs: runs, swift).median
        let dispatchRate = Measure.medianRate(runs: runs, dispatch).median
        for workers in [1, 2] {
            let fastRate = Measure.medianRate(runs: runs) { fast(workers) }.median
            table.rows.append([label, "\(workers)", Measure.mops(fastRate), Measure.mops(swiftRate),
                               Measure.mops(dispatchRate), Measure.ratio(fastRate / swiftRate),
                               Measure.ratio(fastRate / dispatchRate)])
            table.bars.append(("FastMailbox \(label), W=\(workers)", fastRate / 1e6))
        }
        table.bars.append(("Swift actor \(label)", swiftRate / 1e6))
        table.bars.append(("Dispatch \(label)", dispatchRate / 1e6))
    }

    static func run(_ options: BenchOptions) -> [BenchTable] {
        let runs = options.runs
        let rounds = max(1_000, options.operations / 20)
        let pairRounds = max(100, options.operations / 200)
        let perProducer = max(1_000, options.operations / 4)
        var tables: [BenchTable] = []

        var latency = BenchTable(
            name: "actors-pingpong",
            title: "Request–reply: FastMailbox actors vs Swift actors vs Dispatch (round trips/s)",
            columns: ["workload", "workers", "FastMailbox M/s", "Swift actor M/s", "Dispatch M/s",
                      "FastMailbox / Swift", "FastMailbox / Dispatch"])
        for (name, pairs, r) in [("1 pair", 1, rounds), ("64 pairs", 64, pairRounds)] {
            compare(into: &latency, label: name, runs: runs,
                    swift: { swiftPingPong(pairs: pairs, rounds: r) },
                    dispatch: { dispatchPingPong(pairs: pairs, rounds: r) },
                    fast: { workers in fastPingPong(workers: workers, pairs: pairs, rounds: r) })
        }
        latency.notes.append("Medians of \(runs) runs; 1 pair: \(rounds) round trips, 64 pairs: \(pairRounds) each. Swift actors and Dispatch use their own thread pools (all cores); their columns repeat across the workers rows.")
        tables.append(latency)

        var fanIn = BenchTable(
            name: "actors-fanin",
            title: "Fan-in: P producers → one receiver (messages/s)",
            columns: ["producers", "workers", "FastMailbox M/s", "Swift actor M/s", "Dispatch M/s",
                      "FastMailbox / Swift", "FastMailbox / Dispatch"])
        for producers in [1, 2, 4] {
            let per = perProducer / producers
            compare(into: &fanIn, label: "\(producers)", runs: runs,
                    swift: { swiftFanIn(producers: producers, perProducer: per) },
                    dispatch: { dispatchFanIn(producers: producers, perProducer: per) },
                    fast: { workers in fastFanIn(workers: workers, producers: producers, perProducer: per, capacity: 256) })
        }
        fanIn.notes.append("Medians of \(runs) runs of \(perProducer) messages in all; FastMailbox mailbox capacity 256. Swift actor producers are tasks awaiting each `add` (the idiomatic call); Dispatch producers are threads calling `async`.")
        tables.append(fanIn)

        var ringSizes = BenchTable(
            name: "actors-ringsize",
            title: "Fan-in over mailbox ring sizes (2 producers, 2 workers, messages/s)",
            columns: ["mailbox capacity", "FastMailbox M/s", "vs capacity 1024"])
        var rates: [(Int, Double)] = []
        for capacity in [4, 32, 256, 1024] {
            rates.append((capacity, Measure.medianRate(runs: runs) {
                fastFanIn(workers: 2, producers: 2, perProducer: perProducer / 2, capacity: capacity)
            }.median))
        }
        let reference = rates.last!.1
        for (capacity, rate) in rates {
            ringSizes.rows.append(["\(capacity)", Measure.mops(rate), Measure.ratio(rate / reference)])
            ringSizes.bars.append(("capacity \(capacity)", rate / 1e6))
        }
        ringSizes.notes.append("A full ring overflows in order (never blocks a sender), so small rings still work; they pay the overflow lock.")
        tables.append(ringSizes)

        let memory = actorMemory(count: 10_000)
        var mem = BenchTable(name: "actors-memory", title: "Memory per actor (heap bytes, mallinfo2, 10,000 actors)",
                             columns: ["state", "bytes per actor"])
        mem.rows.append(["spawned, idle (no message yet)", String(format: "%.0f", memory.idle)])
        mem.rows.append(["after one message (ring of \(ActorSystem.defaultMailboxCapacity) slots allocated)", String(format: "%.0f", memory.afterOneMessage)])
        tables.append(mem)
        return tables
    }
}
