import Foundation
import Synchronization

/// Runs producer and consumer threads over one queue (the `ring` and `mailbox`
/// workloads) and checks what the consumers took.
///
/// Producer p sends `each` words `p << 32 | sequence`. Each consumer checks that every
/// producer's sequence numbers rise (with one consumer: rise by exactly one), and the
/// consumers together must take every word once (count and sum).
enum QueueDriver {
    /// How a run's failure starts when its threads did not finish in time: they are still
    /// running, so whatever they use (a raw ring) must not be freed.
    static let timedOut = "timed out"

    /// True when `outcome` is a run whose threads are still running (see `timedOut`).
    static func leftThreadsRunning(_ outcome: RunOutcome) -> Bool {
        outcome.failure?.hasPrefix(timedOut) ?? false
    }

    static func word(producer: Int, sequence: Int) -> UInt { UInt(producer) << 32 | UInt(sequence) }

    /// What one consumer saw.
    private struct Seen {
        var last: [Int]
        var taken = 0
        var sum = 0
        var disorder: String?
        init(producers: Int) { last = [Int](repeating: -1, count: producers) }
        mutating func take(_ word: UInt, exact: Bool) {
            let producer = Int(word >> 32), sequence = Int(word & 0xFFFF_FFFF)
            guard producer < last.count else { disorder = disorder ?? "word from unknown producer \(producer)"; return }
            if exact ? sequence != last[producer] + 1 : sequence <= last[producer] {
                disorder = disorder ?? "producer \(producer): #\(sequence) after #\(last[producer])"
            }
            last[producer] = sequence
            taken += 1
            sum += sequence
        }
    }

    /// `take(&backoff)` returns up to a batch of words (empty when it found none).
    static func run(producers: Int, consumers: Int, each: Int,
                    produce: @escaping @Sendable (UInt) -> Void,
                    take: @escaping @Sendable (inout [UInt]) -> Void) -> RunOutcome {
        let total = producers * each
        let takenAll = Atomic<Int>(0)
        let results = Mutex<[Seen]>([])
        let finished = DispatchGroup()
        for _ in 0..<(producers + consumers) { finished.enter() }
        let t0 = StartLine.startThreads(producers + consumers) { index in
            defer { finished.leave() }
            if index < producers {
                for sequence in 0..<each { produce(word(producer: index, sequence: sequence)) }
                return
            }
            var seen = Seen(producers: producers)
            var batch: [UInt] = []
            batch.reserveCapacity(64)
            var backoff = Backoff()
            while takenAll.load(ordering: .relaxed) < total {
                batch.removeAll(keepingCapacity: true)
                take(&batch)
                if batch.isEmpty { backoff.pause(); continue }
                for word in batch { seen.take(word, exact: consumers == 1) }
                takenAll.wrappingAdd(batch.count, ordering: .relaxed)
            }
            results.withLock { $0.append(seen) }
        }
        let done = finished.wait(timeout: .now() + 120) == .success
        let seconds = Double(Clock.now() - t0) / 1e9
        if !done {
            return .failed("\(QueueDriver.timedOut): consumers took \(takenAll.load(ordering: .relaxed)) of \(total) words in 120 s")
        }
        let seen = results.withLock { $0 }
        if let disorder = seen.compactMap(\.disorder).first { return .failed(disorder) }
        let taken = seen.map(\.taken).reduce(0, +), sum = seen.map(\.sum).reduce(0, +)
        if taken != total { return .failed("took \(taken) words, expected \(total)") }
        if sum != producers * each * (each - 1) / 2 { return .failed("sequence sum \(sum) is wrong") }
        return RunOutcome(seconds: seconds, operations: total)
    }
}
