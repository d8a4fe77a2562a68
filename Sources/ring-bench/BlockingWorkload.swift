// blocking: a pool that meets code that blocks. 16 actors each handle N
// messages; every 20th message makes a 1 ms blocking call (usleep), the others a fixed
// compute (ParallelWorkload.Work). Rows: FastMailbox with blocked-turn detection off
// (MN_BLOCKING_THRESHOLD_MS=0: a blocked turn holds its worker), with detection on at the
// default 10 ms (a 1 ms call never trips it: the row shows the default costs nothing),
// at 1 ms, and with the call wrapped in `blocking {}`; Swift's default actors do the same
// (their cooperative pool has one thread per core, and nothing hands work away from a
// blocked one). Check: every actor handled exactly N messages.
import FastMailbox
import MNScheduler
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum BlockingWorkload {
    static let actors = 16
    static let blockEvery = 20
    static let blockMicroseconds: useconds_t = 1_000

    /// Per-actor counts, each slot written by its actor only, read after the latch.
    final class Counts: @unchecked Sendable {
        var counts: [Int]
        let latch: Latch
        let each: Int
        init(each: Int) { counts = [Int](repeating: 0, count: BlockingWorkload.actors); latch = Latch(BlockingWorkload.actors); self.each = each }
        func handle(_ actor: Int, _ seed: Int, declared: Bool) {
            if seed % BlockingWorkload.blockEvery == 0 {
                if declared { blocking { usleep(BlockingWorkload.blockMicroseconds) } } else { usleep(BlockingWorkload.blockMicroseconds) }
            } else {
                _ = ParallelWorkload.Work.compute(seed)
            }
            counts[actor] += 1
            if counts[actor] == each { latch.countDown() }
        }
        func check(finished: Bool) -> String? {
            finished ? nil : "only \(counts.reduce(0, +)) of \(counts.count * each) messages handled"
        }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let each = cell.size
        let counts = Counts(each: each)
        switch cell.runtime {
        case .fastmailbox:
            let mode = cell.variant.parameter  // 0: detection off, 1: on (10 ms), 2: blocking {}, 3: on (1 ms)
            var configuration = SchedulerConfiguration()
            configuration.workers = cell.workers
            configuration.blockingThresholdMilliseconds = [0, 10, 10, 1][mode]
            let system = try! ActorSystem(name: "ring-bench", configuration: configuration)
            defer { _ = system.shutdown() }
            let refs = (0..<actors).map { index in
                try! system.spawn { (seed: Int, _: ActorContext<Int>) in counts.handle(index, seed, declared: mode == 2) }
            }
            let t0 = Clock.now()
            for seed in 0..<each { for ref in refs { ref.tell(seed) } }
            return .timed(since: t0, operations: actors * each, check: counts.check(finished: counts.latch.wait()))
        case .swift:
            let workers = (0..<actors).map { BlockingSwiftWorker(index: $0, counts: counts) }
            let t0 = Clock.now()
            Blocking.run(on: nil) {
                await withTaskGroup(of: Void.self) { group in
                    for worker in workers {
                        group.addTask { for seed in 0..<each { await worker.work(seed) } }
                    }
                }
            }
            return .timed(since: t0, operations: actors * each, check: counts.check(finished: counts.latch.wait()))
        default:
            return .failed("blocking has no \(cell.runtime) implementation")
        }
    }
}

actor BlockingSwiftWorker {
    let index: Int
    let counts: BlockingWorkload.Counts
    init(index: Int, counts: BlockingWorkload.Counts) { self.index = index; self.counts = counts }
    func work(_ seed: Int) { counts.handle(index, seed, declared: false) }
}
