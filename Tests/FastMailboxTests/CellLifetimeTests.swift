// A cell's lifetime under MNScheduler's owner bit (UnitHeader.swift, "Lifetime";
// CellTable T4): while an actor is registered its run-queue entries hold no retain; its
// final turn deregisters it, handing the registry's retain to the worker running that
// turn, which releases it after the turn. These tests stop actors while messages race
// them and shut down with actors mid-turn, and check that every cell is freed (none
// leaked, none freed early: ASan/TSan runs catch a use after free) and the books balance.
// Counted, never timed.

import Foundation
import Synchronization
import Testing
@testable import FastMailbox
import MNScheduler
import FastMailboxTestSupport
import TestSupport

@Suite("Cell lifetime (registry retain, unretained run-queue entries)")
struct CellLifetimeTests {
    final class Weak: @unchecked Sendable { weak var object: AnyObject? }
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func add() { value.wrappingAdd(1, ordering: .relaxed) }
    }

    @Test("actors stopped while messages race them are freed after their last turn; every message delivered or dead-lettered")
    func stoppedWhileMessagesRace() throws {
        let system = try makeSystem(workers: 2)
        let actors = 40, senders = 3, perSender = underThreadSanitizer ? 40 : 400
        let delivered = Counter()
        var weaks: [Weak] = []
        do {
            var refs: [ActorRef<Int>] = []
            for _ in 0..<actors {
                let ref = try system.spawn { (_: Int, _) in delivered.add() }
                let weak = Weak()
                weak.object = ref.identity as AnyObject
                weaks.append(weak)
                refs.append(ref)
            }
            let shared = refs
            runOnThreads(senders + 1) { index in
                if index == senders {  // the stopper, racing the senders
                    for ref in shared { ref.stop(index % 2 == 0 ? .immediately : .afterDrainingMailbox) }
                    return
                }
                for message in 0..<perSender { for ref in shared { ref.tell(message) } }
            }
        }
        #expect(eventually(timeout: .seconds(20)) { weaks.allSatisfy { $0.object == nil } },
                "a stopped actor's cell is still alive after its last turn")
        let report = system.shutdown()
        #expect(report.isBalanced && report.actorsNotStopped == 0, "\(report)")
        #expect(report.sent == actors * senders * perSender)
        #expect(report.delivered == delivered.value.load(ordering: .relaxed))
    }

    @Test("shutdown with actors mid-turn frees every cell after its turn ends and balances the books")
    func shutdownMidTurn() throws {
        var weaks: [Weak] = []
        let started = Counter()
        let gate = DispatchSemaphore(value: 0)
        let system = try makeSystem(workers: 2)
        do {
            // Two actors whose first message holds a worker until shutdown has begun; others queued behind.
            var refs: [ActorRef<Int>] = []
            for index in 0..<10 {
                let ref = try system.spawn { (message: Int, _) in
                    if message == 0, index < 2 {
                        started.add()
                        gate.wait()
                    }
                }
                let weak = Weak()
                weak.object = ref.identity as AnyObject
                weaks.append(weak)
                refs.append(ref)
            }
            for ref in refs { for message in 0..<20 { ref.tell(message) } }
            #expect(eventually { started.value.load(ordering: .relaxed) == 2 })
            let opener = Thread {
                // Open once shutdown has closed the mailboxes (not timed: either order is valid).
                while !system.isShuttingDown { usleep(100) }
                gate.signal()
                gate.signal()
            }
            opener.start()
        }
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
        #expect(eventually(timeout: .seconds(20)) { weaks.allSatisfy { $0.object == nil } },
                "a cell is still alive after shutdown and its last turn")
    }
}
