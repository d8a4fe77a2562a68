// parallel: Savina's fork-join throughput. One driver sends `size` messages to each of 64
// actors, round-robin; each message costs a fixed compute (`Work.rounds` dependent
// xorshift steps: `Work.ceiling` times it alone, the rate no runtime can pass). Check: every actor's checksum of its results equals the one computed
// beforehand, so no message was lost, doubled or skipped. FastMailbox's driver is this
// thread, or (row "driver in the pool") an actor, as the other runtimes' senders are.
// The "64 pairs" row (FastMailbox only; a negative parameter) has no outside driver: 64
// producer actors each feed their own worker actor, `chunk` messages per producer turn,
// so all the work is inside the pool — independent work that should scale with workers
// (with an outside driver, the driver's thread is extra CPU at 1 worker and competes
// with the workers at W = CPUs).
// Each actor's checksum and count live in their own object, padded past a cache line,
// so actors on different workers do not share one (false sharing in the harness would
// be measured as the runtime's scaling).
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
        /// The most messages per second `workers` cores could process if a message cost
        /// nothing but its compute: `compute` alone, timed on this thread, times
        /// the workers. Every runtime's rate in the row is bounded by it: the compute is one
        /// chain of dependent steps, so the runtime's own instructions per message run in its
        /// shadow and a faster runtime gains little (ring-bench's table prints it beside the
        /// FastMailbox row).
        static func ceiling(workers: Int) -> Double {
            let calls = 100_000
            var sum: UInt64 = 0
            // DispatchTime, not Clock.now(): the cell's first Clock reading starts its
            // CPUs-busy window (CPUMeter), and that must be the run's t0.
            let t0 = DispatchTime.now().uptimeNanoseconds
            for seed in 0..<calls { sum &+= compute(seed) }
            let nanoseconds = Double(max(DispatchTime.now().uptimeNanoseconds - t0, 1)) / Double(calls)
            if sum == 0 { print("parallel: a compute checksum of 0") }  // keeps the calls
            return Double(workers) * 1e9 / nanoseconds
        }
        /// Checksum of messages 0..<n (what each actor must end with).
        static func expected(_ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 &+ compute($1) } }
    }

    /// One actor's checksum and count, written only by that actor, read after the latch.
    /// Padded to 128 bytes so two actors' slots never share a cache line.
    final class Slot: @unchecked Sendable {
        var sum: UInt64 = 0
        var count = 0
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Per-actor checksums: slot i is written only by actor i, read after the latch.
    final class Sums: Sendable {
        let slots: [Slot]
        let latch: Latch
        let each: Int
        init(actors: Int, each: Int) {
            slots = (0..<actors).map { _ in Slot() }
            latch = Latch(actors)
            self.each = each
        }
        func receive(_ actor: Int, _ seed: Int) {
            let slot = slots[actor]
            slot.sum &+= Work.compute(seed)
            slot.count += 1
            if slot.count == each { latch.countDown() }
        }
        func check(finished: Bool) -> String? {
            if !finished { return "only \(slots.reduce(0) { $0 + $1.count }) of \(slots.count * each) messages processed" }
            let expected = Work.expected(each)
            if let bad = slots.firstIndex(where: { $0.sum != expected }) { return "actor \(bad)'s checksum is wrong" }
            return nil
        }
    }

    /// Messages a producer sends its worker per message it handles in the pairs row (one
    /// worker turn's budget at the default throughput).
    static let chunk = 64

    /// The variant parameter of the row whose FastMailbox driver is an actor (64 actors).
    static let driverActorParameter = 1

    /// Seeds the driver actor sends each of the 64 actors per message (`driverActorParameter`'s
    /// row): 16 × 64 = 1,024 tells, then it tells itself to go on (with 4, the second worker
    /// was idle a third of the time; 64 did no better than 16).
    static let seedsPerDriverMessage = 16

    /// The actors a row's parameter stands for (the driver-actor row has 64).
    static func actors(_ parameter: Int) -> Int { parameter == driverActorParameter ? 64 : parameter }

    static func run(_ cell: Cell) -> RunOutcome {
        if cell.variant.parameter < 0 { return pairs(cell) }
        let driverIsActor = cell.variant.parameter == driverActorParameter
        let actors = actors(cell.variant.parameter)
        let each = cell.size
        let sums = Sums(actors: actors, each: each)
        let capacity = cell.capacity ?? ActorSystem.defaultMailboxCapacity
        switch cell.runtime {
        case .fastmailbox:
            let ceiling = Work.ceiling(workers: cell.workers)
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let refs = (0..<actors).map { index in
                try! system.spawn(options: SpawnOptions(mailboxCapacity: capacity)) { (seed: Int, _: ActorContext<Int>) in sums.receive(index, seed) }
            }
            var outcome = drive(refs, each: each, sums: sums, from: driverIsActor ? system : nil)
            outcome.extras["compute_ceiling"] = ceiling
            return outcome
        case .sequential:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            let refs = (0..<actors).map { index in
                try! system.spawn(options: SpawnOptions(mailboxCapacity: capacity)) { (inbox: Inbox<Int>) in
                    for await seed in inbox { sums.receive(index, seed) }
                }
            }
            return drive(refs, each: each, sums: sums, from: driverIsActor ? system : nil)
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

    /// Sends seeds 0..<each round-robin to `refs` and times until every actor counted its
    /// last. The driver is this thread, or with `system` an actor in its pool that sends
    /// `seedsPerDriverMessage` rounds per message and then tells itself the next seed (inside
    /// the pool, as Go's driver goroutine and Swift's tasks are; ChunkedActor: how long a
    /// turn runs).
    static func drive(_ refs: [ActorRef<Int>], each: Int, sums: Sums, from system: ActorSystem?) -> RunOutcome {
        guard let system else {
            let t0 = Clock.now()
            for seed in 0..<each { for ref in refs { ref.tell(seed) } }
            return .timed(since: t0, operations: refs.count * each, check: sums.check(finished: sums.latch.wait()))
        }
        let driver = ChunkedActor.spawn(in: system, total: each, perMessage: seedsPerDriverMessage) { seeds in
            for seed in seeds { for ref in refs { ref.tell(seed) } }
        }
        let t0 = Clock.now()
        driver.tell(0)
        return .timed(since: t0, operations: refs.count * each, check: sums.check(finished: sums.latch.wait()))
    }

    /// The pairs row: producer i sends seeds `from..<from + chunk` to worker i, then tells
    /// itself the next `from`, until `size` seeds were sent.
    static func pairs(_ cell: Cell) -> RunOutcome {
        guard cell.runtime == .fastmailbox else { return .failed("parallel's pairs row has no \(cell.runtime) implementation") }
        let count = -cell.variant.parameter
        let each = cell.size
        let sums = Sums(actors: count, each: each)
        let capacity = cell.capacity ?? ActorSystem.defaultMailboxCapacity
        let system = Blocking.system(workers: cell.workers)
        defer { _ = system.shutdown() }
        let producers = (0..<count).map { index in
            let worker = try! system.spawn(options: SpawnOptions(mailboxCapacity: capacity)) { (seed: Int, _: ActorContext<Int>) in sums.receive(index, seed) }
            return ChunkedActor.spawn(in: system, total: each, perMessage: chunk) { seeds in
                for seed in seeds { worker.tell(seed) }
            }
        }
        let t0 = Clock.now()
        for producer in producers { producer.tell(0) }
        return .timed(since: t0, operations: count * each, check: sums.check(finished: sums.latch.wait()))
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
