// The first table: raw ck_ring against Mailbox with the same threads.
//
// Every cell runs its producers and one busy-polling consumer on real threads, times from a
// common start barrier to the consumer's last message, and reports the median rate of
// `runs` runs (and the max/min spread). Raw rings retry a full enqueue (spinning), as does
// Mailbox.trySend; Mailbox.send never retries: a full ring overflows (the overflow count is
// shown, so it is visible when the lock-free path was left).
import Foundation
import Synchronization
import FastMailbox
import MNScheduler
import CConcurrencyKit

enum MailboxBenchmarks {
    static let capacity = 1024

    /// Waits a little: spins first, then yields the CPU. On a 2-core machine a pure spin
    /// starves the very thread it waits for (a preempted producer or consumer).
    struct Backoff {
        var spins = 0
        mutating func pause() {
            spins += 1
            if spins < 64 { ckshim_stall() } else { sched_yield(); spins = 0 }
        }
    }

    /// Start line for `parties` threads: all spin until the last arrives.
    final class StartLine: Sendable {
        let arrived = Atomic<Int>(0)
        let parties: Int
        init(parties: Int) { self.parties = parties }
        func wait() {
            arrived.wrappingAdd(1, ordering: .acquiringAndReleasing)
            var backoff = Backoff()
            while arrived.load(ordering: .acquiring) < parties { backoff.pause() }
        }
        /// For the timing thread: waits until every other party is at the line, reads the
        /// clock, then releases them. The clock is read before anyone can start, so a
        /// timer thread that gets preempted cannot start its clock after the work finished.
        func releaseAndStartClock() -> UInt64 {
            var backoff = Backoff()
            while arrived.load(ordering: .acquiring) < parties - 1 { backoff.pause() }
            let t0 = Measure.now()
            arrived.wrappingAdd(1, ordering: .acquiringAndReleasing)
            return t0
        }
    }

    /// Runs `producers` threads calling `produce(i)` for i in 0..<perProducer and the
    /// calling thread as consumer calling `consume()` (returns items taken) until
    /// `producers * perProducer` were taken. Returns items per second.
    static func timed(producers: Int, perProducer: Int,
                      produce: @escaping @Sendable (Int) -> Void,
                      consume: (inout Backoff) -> Int) -> Double {
        let start = StartLine(parties: producers + 1)
        let group = DispatchGroup()
        for _ in 0..<producers {
            group.enter()
            Thread {
                start.wait()
                for i in 0..<perProducer { produce(i) }
                group.leave()
            }.start()
        }
        let total = producers * perProducer
        let t0 = start.releaseAndStartClock()
        var taken = 0
        var backoff = Backoff()
        while taken < total { taken += consume(&backoff) }
        let elapsed = Measure.now() - t0
        group.wait()
        return Double(total) / (Double(elapsed) / 1e9)
    }

    enum RawEnqueue { case singleProducer, multiProducer, multiProducerYielding }

    static func rawRing(producers: Int, ops: Int, enqueue: RawEnqueue) -> Double {
        let ring = RawRing(capacity: capacity)
        defer { ring.deallocate() }
        let per = ops / producers
        return timed(producers: producers, perProducer: per, produce: { i in
            let word = UInt(i) | 1 << 40
            var backoff = Backoff()
            switch enqueue {
            case .singleProducer: while !ring.enqueueSingleProducer(word: word) { backoff.pause() }
            case .multiProducer: while !ring.enqueueMultiProducer(word: word) { backoff.pause() }
            case .multiProducerYielding: while !ring.enqueueMultiProducerYielding(word: word) { backoff.pause() }
            }
        }, consume: { backoff in
            var word: UInt = 0
            var n = 0
            while n < 64, ring.dequeueSingleConsumer(word: &word) { n += 1 }
            if n == 0 { backoff.pause() }
            return n
        })
    }

    static func mailbox(producers: Int, ops: Int, trySend: Bool) -> (rate: Double, overflow: Int) {
        let mailbox = try! Mailbox<Int>(capacity: capacity)
        let per = ops / producers
        let rate = timed(producers: producers, perProducer: per, produce: { i in
            if trySend {
                var backoff = Backoff()
                while true {
                    if case .full = mailbox.trySend(i) { backoff.pause(); continue }
                    break
                }
            } else {
                _ = mailbox.send(i)
            }
        }, consume: { backoff in
            var n = 0
            _ = mailbox.drain(max: 64) { _ in n += 1 }
            if n == 0 { backoff.pause() }
            return n
        })
        return (rate, mailbox.overflowSendCount)
    }

    static func run(_ options: BenchOptions) -> [BenchTable] {
        var table = BenchTable(
            name: "mailbox",
            title: "Mailbox vs raw ck_ring (capacity \(capacity), Int messages, 1 consumer)",
            columns: ["workload", "producers", "raw ck_ring M/s", "raw + yielding commit M/s", "Mailbox.send M/s",
                      "Mailbox.trySend M/s", "send / raw", "trySend / raw", "overflow sends (median run)",
                      "spread raw/send"])
        // The oversubscribed row runs 1/10 of the messages (1/100 for raw ck_ring, whose
        // spinning commit can manage only a few thousand per second there; see the note).
        let cases: [(name: String, producers: Int, raw: RawEnqueue, rawScale: Int, scale: Int)] = [
            ("spsc", 1, .singleProducer, 1, 1), ("mpsc", 1, .multiProducer, 1, 1), ("mpsc", 2, .multiProducer, 1, 1),
            ("mpsc, oversubscribed", 4, .multiProducer, 100, 10),
        ]
        for c in cases {
            // ck's spinning commit with more producers than cores has tails of minutes
            // (seen in a CI run); --quick skips that one cell.
            let skipRaw = options.quick && c.rawScale > 1
            let raw = skipRaw ? (median: Double.nan, spread: Double.nan) : Measure.medianRate(runs: options.runs) {
                rawRing(producers: c.producers, ops: options.operations / c.rawScale, enqueue: c.raw)
            }
            let yielding = c.raw == .singleProducer ? nil : Measure.medianRate(runs: options.runs) {
                rawRing(producers: c.producers, ops: options.operations / c.scale, enqueue: .multiProducerYielding)
            }
            var overflows: [Int] = []
            let send = Measure.medianRate(runs: options.runs) {
                let r = mailbox(producers: c.producers, ops: options.operations / c.scale, trySend: false)
                overflows.append(r.overflow)
                return r.rate
            }
            let trySend = Measure.medianRate(runs: options.runs) {
                mailbox(producers: c.producers, ops: options.operations / c.scale, trySend: true).rate
            }
            overflows.sort()
            table.rows.append([
                c.name, "\(c.producers)", Measure.mops(raw.median), yielding.map { Measure.mops($0.median) } ?? "–",
                Measure.mops(send.median), Measure.mops(trySend.median), Measure.ratio(send.median / raw.median),
                Measure.ratio(trySend.median / raw.median), "\(overflows[overflows.count / 2])",
                String(format: "%.1f/%.1f", raw.spread, send.spread),
            ])
            table.bars.append(("raw \(c.name) P=\(c.producers)", raw.median / 1e6))
            if let yielding { table.bars.append(("raw+yield \(c.name) P=\(c.producers)", yielding.median / 1e6)) }
            table.bars.append(("Mailbox.send \(c.name) P=\(c.producers)", send.median / 1e6))
            table.bars.append(("Mailbox.trySend \(c.name) P=\(c.producers)", trySend.median / 1e6))
        }
        table.notes.append("Medians of \(options.runs) runs of \(options.operations) messages each; ratios are of medians from the same run of ring-bench. "
            + "'spread' is max/min rate across runs. The spsc row compares raw ck_ring's single-producer enqueue with Mailbox (always multi-producer safe) on one producer thread. "
            + "'raw ck_ring' uses ck's own multi-producer enqueue, whose commit spins while an earlier, preempted producer has not committed; "
            + "'raw + yielding commit' is the same ring with ckshim_ring_enqueue_mp_yielding, the enqueue Mailbox uses, which yields the CPU after a short spin. "
            + "The oversubscribed row (more producers than this machine's 2 cores) shows what a preempted producer costs each.")
        return [table]
    }
}
