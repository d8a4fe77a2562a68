import Testing
import TestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import CConcurrencyKit

/// The orderings that x86-64 gives for free and AArch64 does not. On x86-64 (TSO) these
/// tests pass with or without the fences, so they cannot fail here: they are the litmus
/// tests for a weakly ordered machine (run them on ARM), and the fences themselves were checked in the generated aarch64 code (see the
/// file comments of MPSCQueue.swift and ckshim.h).
@Suite(.serialized) struct WeakMemoryTests {
    /// Rounds of each race; fewer under a sanitizer (each round is a few µs natively).
    static let rounds = runningUnderSanitizer() ? 5_000 : 50_000

    @Test("a consumer going idle and a producer enqueuing at the same moment never both miss each other")
    func idleFlagStoreBufferingLitmus() {
        let queue = try! MPSCQueueBox(capacity: 8)
        let round = Atomic<Int>(0)      // the producer may start round r once it reads r
        let produced = Atomic<Int>(0)   // the producer finished round r (and how)
        let lost = Atomic<Int>(0)
        let doubled = Atomic<Int>(0)
        let rounds = WeakMemoryTests.rounds
        onThreads(2) { thread in
            if thread == 1 {  // producer
                for r in 1...rounds {
                    while round.load(ordering: .acquiring) != r { spinPause() }
                    let first = queue.enqueue(word: UInt(r)) == .accepted(becameNonEmpty: true)
                    produced.store(r * 2 + (first ? 1 : 0), ordering: .releasing)
                }
                return
            }
            for r in 1...rounds {  // consumer
                // Hold the consumer role with an empty ring: claim it, then drain the claim.
                #expect(queue.enqueue(word: 0) == .accepted(becameNonEmpty: true))
                var taken = 0
                #expect(queue.drain(max: 1) { (_: UInt) in taken += 1 } == .more)
                round.store(r, ordering: .releasing)
                // Race: run dry and go idle while the producer enqueues.
                let outcome = queue.drain(max: Int.max) { (_: UInt) in taken += 1 }
                var done = produced.load(ordering: .acquiring)
                while done / 2 != r { spinPause(); done = produced.load(ordering: .acquiring) }
                let producerClaimed = done % 2 == 1
                if outcome == .empty && taken == 1 && !producerClaimed { lost.add(1, ordering: .relaxed) }
                if outcome == .more && producerClaimed { doubled.add(1, ordering: .relaxed) }
                // Whoever holds the role now drains to idle, for the next round.
                while queue.drain(max: Int.max, { (_: UInt) in }) == .more {}
            }
        }
        #expect(lost.load(ordering: .relaxed) == 0, "rounds where the item was left with no consumer")
        #expect(doubled.load(ordering: .relaxed) == 0, "rounds with two consumers")
    }

    @Test("a multi-consumer ring hands every word to exactly one consumer while producers reuse freed slots")
    func ringSlotReuseLitmus() {
        // A tiny ring keeps producers writing into slots consumers have just freed: a slot
        // load not ordered before the c_head publish would return a newer word (one lost,
        // one duplicated).
        let ring = RawRing(capacity: 4)
        defer { ring.deallocate() }
        let perProducer = WeakMemoryTests.rounds / 2
        let seen = Lock<[Int]>(Array(repeating: 0, count: 2 * perProducer + 1))  // not Mutex: TSan cannot see its futex (Lock.swift)
        let consumed = Atomic<Int>(0)
        onThreads(4) { thread in
            if thread < 2 {  // producers: words 1... (thread 0 odd, thread 1 even)
                for i in 0..<perProducer {
                    let word = UnsafeMutableRawPointer(bitPattern: 2 * i + 1 + thread)!
                    while !ring.enqueueMultiProducer(word) { sched_yield() }
                }
                return
            }
            var mine: [Int] = []
            while consumed.load(ordering: .relaxed) < 2 * perProducer {
                let word = thread == 2 ? ring.dequeueMultiConsumer() : ring.tryDequeueMultiConsumer()
                guard let word else { sched_yield(); continue }
                consumed.add(1, ordering: .relaxed)
                mine.append(Int(bitPattern: word))
            }
            seen.withLock { for w in mine { $0[w] += 1 } }
        }
        let counts = seen.withLock { $0 }
        #expect(counts.dropFirst().allSatisfy { $0 == 1 }, "every word exactly once")
    }
}

/// A busy-wait step that gives the core away now and then (2 cores, 4+ threads).
private func spinPause() {
    ckshim_stall()
    if Int.random(in: 0..<64) == 0 { sched_yield() }
}
