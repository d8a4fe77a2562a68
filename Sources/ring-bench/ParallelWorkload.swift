// parallel: Savina's fork-join throughput. One driver sends `size` messages to each of 64
// actors, round-robin; each message costs a fixed compute (`Work.rounds` dependent
// xorshift steps, about 100 ns). Check: every actor's checksum of its results equals the
// one computed beforehand, so no message was lost, doubled or skipped.
import Dispatch
import FastMailbox
import MNScheduler
import Synchronization

enum ParallelWorkload {
    /// The fixed compute per message: dependent steps the optimiser cannot fold.
    enum Work {
        static let rounds = 100
        @inline(never)
        static func compute(_ seed: Int) -> UInt64 {
            var x = UInt64(truncatingIfNeeded: seed) &+ 0x9E37_79B9_7F4A_7C15
            for _ in 0..<rounds {
                x ^= x << 13
                x ^= x >> 7
                x ^= x << 17
            }
            return x
        }
        /// Checksum of messages 0..<n (what each actor must end with).
        static func expected(_ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 &+ compute($1) } }
    }

    /// Per-actor checksums: slot i is written only by actor i, read after the latch.
    final class Sums: @unchecked Sendable {
        var sums: [UInt64]
        var counts: [Int]
        let latch: Latch
        let each: Int
        init(actors: Int, each: Int) {
            sums = [UInt64](repeating: 0, count: actors)
            counts = [Int](repeating: 0, count: actors)
            latch = Latch(actors)
            self.each = each
        }
        func receive(_ actor: Int, _ seed: Int) {
            sums[actor] &+= Work.compute(seed)
            counts[actor] += 1
            if counts[actor] == each { latch.countDown() }
        }
        func check(finished: Bool) -> String? {
            if !finished { return "only \(counts.reduce(0, +)) of \(counts.count * each) messages processed" }
            let expected = Work.expected(each)
            if let bad = sums.firstIndex(where: { $0 != expected }) { return "actor \(bad)'s checksum is wrong" }
            return nil
        }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let actors = cell.variant.parameter
        let each = cell.size
        let sums = Sums(actors: actors, each: each)
        let capacity = cell.capacity ?? ActorSystem.defaultMailboxCapacity
        switch cell.runtime {
        case .fastmailbox:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let refs = (0..<actors).map { index in
                try! system.spawn(mailboxCapacity: capacity) { (seed: Int, _: ActorContext<Int>) in sums.receive(index, seed) }
            }
            let t0 = Clock.now()
            for seed in 0..<each { for ref in refs { ref.tell(seed) } }
            return .timed(since: t0, operations: actors * each, check: sums.check(finished: sums.latch.wait()))
        case .sequential:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let refs = (0..<actors).map { index in
                try! system.spawnSequential(mailboxCapacity: capacity) { (inbox: Inbox<Int>) in
                    for await seed in inbox { sums.receive(index, seed) }
                }
            }
            let t0 = Clock.now()
            for seed in 0..<each { for ref in refs { ref.tell(seed) } }
            return .timed(since: t0, operations: actors * each, check: sums.check(finished: sums.latch.wait()))
        case .mnActor:
            let scheduler = Blocking.scheduler(workers: cell.workers)
            defer { scheduler.shutdown() }
            let workers = (0..<actors).map { MNParallelWorker(index: $0, sums: sums, executor: MNSerialExecutor(scheduler: scheduler)) }
            return native(workers, sums: sums, caller: scheduler.taskExecutor)
        case .swift:
            return native((0..<actors).map { DefaultParallelWorker(index: $0, sums: sums) }, sums: sums, caller: nil)
        case .dispatch:
            let queues = (0..<actors).map { DispatchQueue(label: "worker-\($0)") }
            let t0 = Clock.now()
            for seed in 0..<each { for (index, queue) in queues.enumerated() { queue.async { sums.receive(index, seed) } } }
            return .timed(since: t0, operations: actors * each, check: sums.check(finished: sums.latch.wait()))
        default:
            return .failed("parallel has no \(cell.runtime) implementation")
        }
    }

    static func native<W: ParallelWorker>(_ workers: [W], sums: Sums, caller: (any TaskExecutor)?) -> RunOutcome {
        let t0 = Clock.now()
        Blocking.run(on: caller) {
            await withTaskGroup(of: Void.self) { group in
                for worker in workers {
                    group.addTask(executorPreference: caller) {
                        for seed in 0..<sums.each { await worker.work(seed) }
                    }
                }
            }
        }
        return .timed(since: t0, operations: workers.count * sums.each, check: sums.check(finished: sums.latch.wait()))
    }
}

protocol ParallelWorker: Actor {
    var index: Int { get }
    var sums: ParallelWorkload.Sums { get }
}

extension ParallelWorker {
    func work(_ seed: Int) { sums.receive(index, seed) }
}

actor DefaultParallelWorker: ParallelWorker {
    let index: Int
    let sums: ParallelWorkload.Sums
    init(index: Int, sums: ParallelWorkload.Sums) { self.index = index; self.sums = sums }
}

actor MNParallelWorker: ParallelWorker {
    let index: Int
    let sums: ParallelWorkload.Sums
    let executor: MNSerialExecutor
    init(index: Int, sums: ParallelWorkload.Sums, executor: MNSerialExecutor) {
        self.index = index; self.sums = sums; self.executor = executor
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
