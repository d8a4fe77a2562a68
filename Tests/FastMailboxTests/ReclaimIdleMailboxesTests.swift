import Testing
import Logging
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler

/// Idle actors give their mailbox ring back (ActorSystem+Reclaim.swift; MPSCQueue.swift,
/// "Giving the ring back").
@Suite("Reclaiming idle mailboxes", .serialized) struct ReclaimIdleMailboxesTests {
    private func queue(of ref: ActorRef<Int>) throws -> MPSCQueue {
        try #require(ref.identity as? ActorCellBase<Int>).mailbox.queue
    }

    @Test("a walk frees the rings of actors idle since the previous walk and leaves a busy one; later messages arrive in order, counted once")
    func walkFreesIdleRingsLeavesBusy() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 0)
        let probe = Probe<Int>()
        let idle = try (0..<8).map { i in
            try system.spawn(name: "idle-\(i)") { (m: Int, _) in probe.record(m) }
        }
        let busy = try system.spawn(name: "busy") { (m: Int, _) in probe.record(m) }
        for (i, ref) in idle.enumerated() { ref.tell(i) }
        busy.tell(100)
        #expect(eventually { probe.count == 9 })
        for ref in idle + [busy] { #expect(try queue(of: ref).hasRing) }
        #expect(system.reclaimIdleMailboxes() == 0)  // first look: snapshots only
        busy.tell(101)  // busy between the walks
        #expect(eventually { probe.count == 10 })
        #expect(system.reclaimIdleMailboxes() == 8)
        #expect(eventually { try! idle.allSatisfy { try !queue(of: $0).hasRing } })
        #expect(try queue(of: busy).hasRing)
        #expect(system.idleMailboxRingsReleased == 8)
        // Sends after the release: a fresh ring, order kept, nothing lost or doubled.
        for i in 0..<100 { idle[0].tell(1_000 + i) }
        #expect(eventually { probe.count == 110 })
        #expect(probe.values.filter { $0 >= 1_000 } == Array(1_000..<1_100))
        #expect(try queue(of: idle[0]).dequeuedCount == 101)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 110 && report.sent == 110, "\(report)")
        #expect(eventually { RingEpoch.collect(wait: true) == 0 })
    }

    @Test("on a deterministic scheduler: the walk's request runs in the actor's next turn, which frees the ring")
    func deterministicRelease() throws {
        let deterministic = DeterministicScheduler(seed: 7)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn(name: "quiet") { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        _ = try deterministic.runUntilQuiescent()
        #expect(try queue(of: ref).hasRing)
        #expect(system.reclaimIdleMailboxes() == 0)
        #expect(system.reclaimIdleMailboxes() == 1)
        #expect(try queue(of: ref).hasRing)  // not before its turn
        #expect(try deterministic.runUntilQuiescent() == 1)
        #expect(try !queue(of: ref).hasRing)
        ref.tell(2)
        _ = try deterministic.runUntilQuiescent()
        #expect(probe.values == [1, 2])
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 2, "\(report)")
    }

    @Test("a request pending when a stop arrives is dropped; the stop is handled")
    func requestThenStop() throws {
        let deterministic = DeterministicScheduler(seed: 8)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let ref = try system.spawn(name: "stopping") { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        _ = try deterministic.runUntilQuiescent()
        _ = system.reclaimIdleMailboxes()
        #expect(system.reclaimIdleMailboxes() == 1)
        ref.stop()
        _ = try deterministic.runUntilQuiescent()
        #expect(system.statistics.liveActors == 0)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 1, "\(report)")
    }

    @Test("actors whose system slot holds a queue (watched; a parent whose child stopped) are asked by a system message and give their ring back; the watch still fires")
    func cellsWithSystemQueueRelease() throws {
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let probe = Probe<Int>()
        let target = try system.spawn(name: "watched") { (m: Int, _) in probe.record(m) }
        let watcher = try system.spawn(name: "watcher") { (m: Int, context: ActorContext<Int>) in
            if m == 0 { context.watch(target, with: -1) } else { probe.record(m) }  // -1: target stopped
        }
        let parent = try system.spawn(name: "parent") { (m: Int, context: ActorContext<Int>) in
            let child = try context.spawn { (_: Int, _) in }
            context.stop(child)
            probe.record(m)
        }
        target.tell(1)
        watcher.tell(0)
        parent.tell(2)
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
        #expect(probe.values.sorted() == [-1, 1, 2, 3, 4])
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
    }

    @Test("the system walks by itself every idleMailboxReclaimMilliseconds")
    func automaticWalk() throws {
        let system = try makeReclaimingSystem(workers: 2, idleMailboxReclaimMilliseconds: 5)
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        #expect(eventually { probe.count == 1 })
        #expect(eventually { try! !queue(of: ref).hasRing })
        ref.tell(2)
        #expect(eventually { probe.count == 2 })
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
}
