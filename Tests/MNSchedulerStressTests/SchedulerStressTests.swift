import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler
import TestSupport

/// Stress tests: many threads, many rounds. Each asserts an exact count.
@Suite(.serialized) struct SchedulerStressTests {
    @Test("stress: every scheduling of an idle unit runs it exactly once, over 100k schedulings from 4 threads")
    func exactlyOncePerScheduling() throws {
        let scheduler = try makeScheduler(workers: 2, capacity: 64)
        defer { scheduler.shutdown() }
        let unitCount = 1000, rounds = 100, threads = 4
        let units = (0..<unitCount).map { _ in ClosureUnit() }
        let total = Atomic<Int>(0)
        for round in 1...rounds {
            onThreads(threads) { t in
                for i in stride(from: t, to: unitCount, by: threads) {
                    scheduler.schedule(units[i])
                }
            }
            // Every unit was idle at the start of the round, so each scheduling is one run.
            let done = waitUntil {
                units.allSatisfy { $0.runs.load(ordering: .sequentiallyConsistent) >= round }
                    && units.allSatisfy { $0.stateSnapshot == UnitHeader.idle }
            }
            #expect(done, "round \(round) did not complete")
            if !done { return }
            total.wrappingAdd(unitCount, ordering: .relaxed)
        }
        for unit in units { #expect(unit.runs.load(ordering: .sequentiallyConsistent) == rounds) }
        #expect(total.load(ordering: .relaxed) == unitCount * rounds)
    }

    @Test("stress: 100k sends from 4 threads to 16 units are all processed, and no unit ever runs concurrently with itself")
    func noSelfConcurrencyNoLostWork() throws {
        let scheduler = try makeScheduler(workers: 2, throughput: 8, capacity: 8)
        defer { scheduler.shutdown() }
        let units = (0..<16).map { _ in MailboxUnit() }
        let perThread = 25_000, threads = 4
        onThreads(threads) { t in
            var x = UInt64(t + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<perThread {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                units[Int(x % 16)].send(via: scheduler)
            }
        }
        // Units also message each other from workers (next slot / local queue path).
        let relay = (0..<16).map { _ in MailboxUnit() }
        let fromWorkers = ClosureUnit { _, _ in
            for i in 0..<2000 { relay[i % 16].send(via: scheduler) }
            return .idle
        }
        scheduler.schedule(fromWorkers)
        let all = units + relay
        let expected = perThread * threads + 2000
        #expect(waitUntil { all.reduce(0) { $0 + $1.processed.load(ordering: .sequentiallyConsistent) } == expected })
        #expect(all.reduce(0) { $0 + $1.overlaps.load(ordering: .relaxed) } == 0)
        #expect(all.reduce(0) { $0 + $1.pending.load(ordering: .sequentiallyConsistent) } == 0)
    }

    @Test("stress: work submitted from outside while every worker sleeps is always picked up (500 times)")
    func noLostWakeUp() throws {
        let scheduler = try makeScheduler(workers: 2, spin: 0)
        defer { scheduler.shutdown() }
        let unit = ClosureUnit()
        for i in 1...500 {
            let asleep = waitUntil { scheduler.idleSnapshot.sleeping == 2 }
            #expect(asleep, "workers did not go to sleep before round \(i)")
            scheduler.schedule(unit)
            let ran = waitUntil { unit.runs.load(ordering: .sequentiallyConsistent) == i && unit.stateSnapshot == UnitHeader.idle }
            #expect(ran, "lost wake-up in round \(i)")
            if !ran || !asleep { return }
        }
    }

    @Test("stress: racing wake-ups from 4 threads against sleeping workers lose nothing")
    func racingWakeUps() throws {
        let scheduler = try makeScheduler(workers: 2, spin: 0)
        defer { scheduler.shutdown() }
        let units = (0..<4).map { _ in MailboxUnit() }
        let rounds = 2000
        onThreads(4) { t in
            for _ in 0..<rounds {
                units[t].send(via: scheduler)
                // Leave the pool time to fall asleep now and then.
                if t == 0 { for _ in 0..<200 { ckshimStall() } }
            }
        }
        #expect(waitUntil { units.allSatisfy { $0.processed.load(ordering: .sequentiallyConsistent) == rounds } })
    }

    @Test("stress: shutdown while 4 threads keep scheduling: every unit ran one turn or went to its after-shutdown hook once")
    func shutdownWithWorkInFlight() throws {
        for _ in 0..<5 {
            let scheduler = try makeScheduler(workers: 2, capacity: 8)
            let perThread = 3000
            let units = (0..<4).map { _ in (0..<perThread).map { _ in ClosureUnit() } }
            let started = Atomic<Int>(0)
            let producers = JoinableThread {
                onThreads(4) { t in
                    started.wrappingAdd(1, ordering: .sequentiallyConsistent)
                    for unit in units[t] { scheduler.schedule(unit) }
                }
            }
            _ = waitUntil { started.load(ordering: .sequentiallyConsistent) == 4 }
            let handedBack = scheduler.shutdown()
            producers.join()
            // Each unit was scheduled once: it either ran one turn or went to its
            // after-shutdown hook once (handed back, or scheduled after the hand-back).
            var ran = 0, abandoned = 0, lostOrDouble = 0
            for unit in units.joined() {
                let r = unit.runs.load(ordering: .sequentiallyConsistent)
                let a = unit.abandoned.load(ordering: .sequentiallyConsistent)
                ran += r
                abandoned += a
                if r + a != 1 { lostOrDouble += 1 }
            }
            #expect(lostOrDouble == 0)
            #expect(handedBack.count <= abandoned)
            #expect(ran + abandoned == 4 * perThread)
            #expect(scheduler.shutdown().isEmpty)
        }
    }
}

@inline(__always) func ckshimStall() {
    // A short pause without importing the C module into every test file.
    for _ in 0..<4 { _ = Atomic<Int>(0).load(ordering: .relaxed) }
}
