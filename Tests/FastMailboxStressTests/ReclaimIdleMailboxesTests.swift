import Testing
import Logging
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import TestSupport
import FastMailboxTestKit

/// Idle actors give their mailbox ring back (ActorSystem+Reclaim.swift; MPSCQueue.swift,
/// "Giving the ring back"). The ring epoch is one for the whole process and any worker in
/// a long turn holds it back, so these tests, which wait for every retired block to be
/// freed, run alone, in the stress target.
@Suite("Reclaiming idle mailboxes", .serialized) struct ReclaimIdleMailboxesTests {
    private func queue(of ref: ActorRef<Int>) throws -> CellMailbox<Int> {
        try #require(ref.identity as? ActorCellBase<Int>).mailbox
    }

    @Test("a walk frees the rings of actors idle since the previous walk and leaves a busy one; later messages arrive in order, counted once")
    func walkFreesIdleRingsLeavesBusy() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 0)
        let probe = Probe<Int>()
        let idle = try (0..<8).map { i in
            try system.spawn(options: SpawnOptions(name: "idle-\(i)")) { (m: Int, _) in probe.record(m) }
        }
        let busy = try system.spawn(options: SpawnOptions(name: "busy")) { (m: Int, _) in probe.record(m) }
        // Two messages each: the first travels in the queue's first slot, the second makes
        // the ring (MailboxQueue.md, "The first slot").
        for (i, ref) in idle.enumerated() { ref.tell(i); ref.tell(i) }
        busy.tell(100)
        busy.tell(100)
        #expect(eventually { probe.count == 18 })
        for ref in idle + [busy] { #expect(try queue(of: ref).hasRing) }
        #expect(system.reclaimIdleMailboxes() == 0)  // first look: snapshots only
        busy.tell(101)  // busy between the walks
        #expect(eventually { probe.count == 19 })
        #expect(system.reclaimIdleMailboxes() == 8)
        #expect(eventually { try! idle.allSatisfy { try !queue(of: $0).hasRing } })
        #expect(try queue(of: busy).hasRing)
        // The count follows the ring's detach in the release turn (AnyActorCell.releaseMailboxRing):
        // a turn that already detached may not have counted yet.
        #expect(eventually { system.idleMailboxRingsReleased == 8 })
        // Sends after the release: a fresh ring, order kept, nothing lost or doubled.
        for i in 0..<100 { idle[0].tell(1_000 + i) }
        #expect(eventually { probe.count == 119 })
        #expect(probe.values.filter { $0 >= 1_000 } == Array(1_000..<1_100))
        #expect(try queue(of: idle[0]).dequeuedCount == 102)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 119 && report.sent == 119, "\(report)")
        #expect(eventually { RingEpoch.collect(wait: true) == 0 })
    }

    @Test("on a deterministic scheduler: the walk's request runs in the actor's next turn, which frees the ring")
    func deterministicRelease() throws {
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "quiet")) { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        ref.tell(2)  // the first slot holds 1; 2 makes the ring
        _ = try deterministic.runUntilQuiescent()
        #expect(try queue(of: ref).hasRing)
        #expect(system.reclaimIdleMailboxes() == 0)
        #expect(system.reclaimIdleMailboxes() == 1)
        #expect(try queue(of: ref).hasRing)  // not before its turn
        #expect(try deterministic.runUntilQuiescent() == 1)
        #expect(try !queue(of: ref).hasRing)
        ref.tell(3)
        _ = try deterministic.runUntilQuiescent()
        #expect(probe.values == [1, 2, 3])
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 3, "\(report)")
    }

    @Test("a request pending when a stop arrives is dropped; the stop is handled")
    func requestThenStop() throws {
        let deterministic = DeterministicScheduler(seed: 8)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "stopping")) { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        ref.tell(2)  // the first slot holds 1; 2 makes the ring
        _ = try deterministic.runUntilQuiescent()
        _ = system.reclaimIdleMailboxes()
        #expect(system.reclaimIdleMailboxes() == 1)
        ref.stop()
        _ = try deterministic.runUntilQuiescent()
        #expect(system.metrics.liveActors == 0)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 2, "\(report)")
    }

    @Test("actors whose system slot holds a queue (watched; a parent whose child stopped) are asked by a system message and give their ring back; the watch still fires")
    func cellsWithSystemQueueRelease() throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let target = try system.spawn(options: SpawnOptions(name: "watched")) { (m: Int, _) in probe.record(m) }
        let watcher = try system.spawn(options: SpawnOptions(name: "watcher")) { (m: Int, context: ActorContext<Int>) in
            if m == 0 { context.watch(target, with: -1) } else { probe.record(m) }  // -1: target stopped
        }
        let parent = try system.spawn(options: SpawnOptions(name: "parent")) { (m: Int, context: ActorContext<Int>) in
            let child = try context.spawn { (_: Int, _) in }
            context.stop(child)
            probe.record(m)
        }
        // Two messages each: the first travels in the queue's first slot, the second makes the ring.
        target.tell(1)
        target.tell(5)
        watcher.tell(0)
        watcher.tell(6)
        parent.tell(2)
        parent.tell(7)
        _ = try deterministic.runUntilQuiescent()
        let cells = try [target, parent].map { try #require($0.identity as? AnyActorCell) }
        #expect(cells.allSatisfy { $0.systemQueue != nil })  // the watch, the child's end
        #expect(try [target, watcher, parent].allSatisfy { try queue(of: $0).hasRing })
        #expect(system.reclaimIdleMailboxes() == 0)
        #expect(system.reclaimIdleMailboxes() == 3)  // target and parent too, by message
        _ = try deterministic.runUntilQuiescent()
        #expect(try [target, watcher, parent].allSatisfy { try !queue(of: $0).hasRing })
        #expect(system.idleMailboxRingsReleased == 3)
        target.tell(3)
        parent.tell(4)
        _ = try deterministic.runUntilQuiescent()
        target.stop()
        _ = try deterministic.runUntilQuiescent()
        #expect(probe.values.sorted() == [-1, 1, 2, 3, 4, 5, 6, 7])
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
    }

    @Test("the system walks by itself every idleMailboxReclaimMilliseconds")
    func automaticWalk() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 5)
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        ref.tell(2)  // the first slot holds 1; 2 makes the ring
        #expect(eventually { probe.count == 2 })
        #expect(eventually { try! !queue(of: ref).hasRing })
        ref.tell(3)
        #expect(eventually { probe.count == 3 })
        #expect(system.shutdown().isBalanced)
    }

    @Test("a bad interval is a clear configuration error, from code or the environment")
    func badInterval() throws {
        var configuration = SchedulerConfiguration()
        configuration.idleMailboxReclaimMilliseconds = -1
        #expect(throws: SchedulerConfigurationError(
            variable: "SchedulerConfiguration.idleMailboxReclaimMilliseconds", value: "-1",
            allowed: "an integer in 0...3600000 (milliseconds; 0 turns the automatic walk off)")) {
            _ = try configuration.resolved(environment: [:], cpus: CPUAvailability.current())
        }
        let fromEnvironment = SchedulerConfiguration()
        #expect(throws: SchedulerConfigurationError.self) {
            _ = try fromEnvironment.resolved(environment: ["MN_IDLE_MAILBOX_RECLAIM_MS": "soon"], cpus: CPUAvailability.current())
        }
        let resolved = try SchedulerConfiguration().resolved(environment: [:], cpus: CPUAvailability.current())
        #expect(resolved.idleMailboxReclaimMilliseconds == SchedulerConfiguration.defaultIdleMailboxReclaimMilliseconds)
    }

    // MARK: sequential actors (SequentialActorCell, "Giving the ring back")

    /// `count` sequential actors that record every message they receive, and their refs.
    private func spawnRecordingSequentials(_ count: Int, on system: ActorSystem) throws -> ([Probe<Int>], [ActorRef<Int>]) {
        let probes = (0..<count).map { _ in Probe<Int>() }
        let refs = try probes.map { probe in
            try system.spawn { (inbox: Inbox<Int>) in
                for await message in inbox { probe.record(message) }
            }
        }
        return (probes, refs)
    }

    private func sequentialQueue(of ref: ActorRef<Int>) throws -> CellMailbox<Int> {
        try #require(ref.identity as? SequentialActorCell<Int>).mailbox
    }

    @Test("a walk takes the ring of a sequential actor parked in receive and leaves a busy one; later messages arrive in order, counted once")
    func parkedSequentialGivesRingBack() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 0)
        let (probes, refs) = try spawnRecordingSequentials(5, on: system)
        let idle = Array(refs[0..<4]), busy = refs[4]
        for ref in refs { ref.tell(0) }
        #expect(eventually { probes.allSatisfy { $0.count == 1 } })
        for ref in refs { #expect(try sequentialQueue(of: ref).hasRing) }
        #expect(system.reclaimIdleMailboxes() == 0)  // first look: snapshots only
        busy.tell(1)  // busy between the walks
        #expect(eventually { probes[4].count == 2 })
        #expect(system.reclaimIdleMailboxes() == 4)
        #expect(eventually { try! idle.allSatisfy { try !sequentialQueue(of: $0).hasRing } })
        #expect(try sequentialQueue(of: busy).hasRing)
        #expect(eventually { system.idleMailboxRingsReleased == 4 })  // counted after the detach, as above
        // Sends after the release (two threads, 500 each): a fresh ring, each sender's order
        // kept, nothing lost or doubled.
        runOnThreads(2) { sender in
            for i in 0..<500 { idle[0].tell(1_000 * (sender + 1) + i) }
        }
        #expect(eventually { probes[0].count == 1_001 })
        let values = probes[0].values
        #expect(values.filter { (1_000..<2_000).contains($0) } == Array(1_000..<1_500))
        #expect(values.filter { (2_000..<3_000).contains($0) } == Array(2_000..<2_500))
        #expect(try sequentialQueue(of: idle[0]).dequeuedCount == 1_001)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 1_006 && report.sent == 1_006, "\(report)")
        #expect(eventually { RingEpoch.collect(wait: true) == 0 })
    }

    @Test("a sequential actor woken to give its ring back keeps its timed receive's deadline and its selective receive's buffer")
    func releaseDuringTimedSelectiveReceive() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 0)
        let probe = Probe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            _ = try await inbox.receive()  // the first message: the ring is allocated
            probe.record("first")
            do {
                // 1 is set aside; the wait for an even number outlives the walks' wake-up.
                let even = try await inbox.receive(timeout: .seconds(2)) { $0 % 2 == 0 }
                probe.record("even \(even)")
            } catch is ReceiveTimeout {
                probe.record("timeout")
            }
            probe.record("buffered \(inbox.bufferedCount)")
            probe.record("got \(try await inbox.receive { $0 == 2 })")  // arrives on a fresh ring
            probe.record("next \(try await inbox.receive())")  // the one set aside
            for await _ in inbox {}
        }
        ref.tell(0)
        #expect(eventually { probe.count == 1 })
        ref.tell(1)
        #expect(eventually { try! sequentialQueue(of: ref).approximateCount == 0 })
        let started = ContinuousClock.now
        #expect(system.reclaimIdleMailboxes() == 0)
        #expect(system.reclaimIdleMailboxes() == 1)
        #expect(eventually { try! !sequentialQueue(of: ref).hasRing })
        #expect(probe.count == 1)  // woken, looked again, parked again: still waiting
        #expect(eventually(timeout: .seconds(10)) { probe.count == 3 })
        #expect(ContinuousClock.now - started >= .seconds(1))  // the timer, not the wake-up, ended it
        #expect(probe.values == ["first", "timeout", "buffered 1"])
        ref.tell(2)  // after the release: a fresh ring
        #expect(eventually { probe.count == 5 })
        #expect(probe.values.suffix(2) == ["got 2", "next 1"])
        let report = system.shutdown()
        #expect(report.isBalanced && report.sent == 3, "\(report)")
    }

    @Test("walks racing with bursts of sends to parked sequential actors lose, reorder or double nothing")
    func sequentialReleaseRacingSends() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 0)
        let (probes, refs) = try spawnRecordingSequentials(4, on: system)
        let bursts = 40, burst = 25
        let walking = WalkingFlag()
        let walker = Thread {
            while walking.on.load(ordering: .relaxed) { system.reclaimIdleMailboxes(); usleep(200) }
        }
        walker.start()
        runOnThreads(2) { sender in
            for b in 0..<bursts {
                for ref in refs {
                    for i in 0..<burst { ref.tell(sender * 1_000_000 + b * burst + i) }
                }
                usleep(UInt32(300 + 200 * (b % 3)))  // idle long enough for a walk to ask
            }
        }
        let expected = 2 * bursts * burst
        #expect(eventually(timeout: .seconds(30)) { probes.allSatisfy { $0.count == expected } })
        // Idle at last: the walks take every ring (so the release path ran, racing or not).
        #expect(eventually { try! refs.allSatisfy { try !sequentialQueue(of: $0).hasRing } },
                "\(system.idleMailboxRingsReleased) rings given back")
        walking.on.store(false, ordering: .relaxed)
        for probe in probes {
            let values = probe.values
            #expect(values.filter { $0 < 1_000_000 } == Array(0..<(bursts * burst)))
            #expect(values.filter { $0 >= 1_000_000 } == Array(1_000_000..<(1_000_000 + bursts * burst)))
        }
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 4 * expected && report.sent == 4 * expected, "\(report)")
        #expect(eventually { RingEpoch.collect(wait: true) == 0 })
    }
}

private final class WalkingFlag: Sendable {
    let on = Atomic<Bool>(true)
}
