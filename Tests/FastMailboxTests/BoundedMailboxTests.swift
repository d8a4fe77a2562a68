import Dispatch
import Foundation
@testable import FastMailbox
import MNScheduler
import Synchronization
import Testing
import TestSupport
import FastMailboxTestSupport
import FastMailboxTestKit

/// Bounded mailboxes and back-pressure, nothing lost.
@Suite("Bounded mailboxes", .serialized) struct BoundedMailboxTests {
    /// An actor that blocks in its first message until `gate` is signalled, and records
    /// what it receives.
    final class Recorder: EventActor {
        let gate: DispatchSemaphore
        let seen: Lock<[Int]>
        var first = true
        init(gate: DispatchSemaphore, seen: Lock<[Int]>) { self.gate = gate; self.seen = seen }
        func receive(_ message: Int, context: ActorContext<Int>) {
            if first { first = false; gate.wait() }
            seen.withLock { $0.append(message) }
        }
    }

    /// Waits without blocking a cooperative thread (the senders under test need one).
    func settled(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<20_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    /// `settled` with a shorter bound, for what must happen "at once" (a failure then costs
    /// seconds, not the 20 s of `settled`).
    func settled(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    /// A `send` in a task of its own whose outcome goes to `outcomes` (nil: it got in).
    func sendRecording(_ value: Int, to ref: ActorRef<Int>, into outcomes: Probe<SendError<Int>?>) -> Task<Void, Never> {
        Task.detached {
            do throws(SendError<Int>) { try await ref.send(value); outcomes.record(nil) } catch { outcomes.record(error) }
        }
    }

    /// A bounded actor of capacity 4 blocked in message 0 with 1, 2, 3 queued: full.
    func fullBoundedActor() async throws -> (ActorSystem, ActorRef<Int>, DispatchSemaphore, Lock<[Int]>) {
        let system = try makeSystem()
        let gate = DispatchSemaphore(value: 0)
        let seen = Lock<[Int]>([])
        let ref = try system.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded)) { Recorder(gate: gate, seen: seen) }
        ref.tell(0)
        #expect(await settled { inHandWithNothingQueued(ref) })
        for i in 1...3 { #expect(ref.trySend(i).isAccepted) }
        return (system, ref, gate, seen)
    }

    /// The actor is in a turn (its message in hand) with nothing queued: `mailboxDepth` is
    /// one while a turn runs, plus the messages queued.
    func inHandWithNothingQueued(_ ref: ActorRef<Int>) -> Bool {
        ref.mailboxDepth == 1 && (ref.identity as? ActorCellBase<Int>)?.mailbox.count == 0
    }

    func waiters(of ref: ActorRef<Int>) -> Int {
        (ref.identity as? ActorCellBase<Int>)?.waiters?.count.load(ordering: .relaxed) ?? -1
    }

    @Test("a full bounded mailbox: tell dead-letters with .mailboxFull, trySend hands the message back; both accept again once there is room")
    func fullMailbox() throws {
        let system = try makeSystem()
        let gate = DispatchSemaphore(value: 0)
        let seen = Lock<[Int]>([])
        let ref = try system.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded)) { Recorder(gate: gate, seen: seen) }
        ref.tell(0)
        #expect(eventually { inHandWithNothingQueued(ref) })  // 0 in hand, blocked
        for i in 1...3 { #expect(ref.trySend(i).isAccepted, "room for capacity − 1 = 3") }
        ref.tell(4)
        guard case .full(let back) = ref.trySend(5) else { Issue.record("trySend on a full mailbox was not .full"); return }
        #expect(back == 5)
        #expect(system.metrics.deadLetters.mailboxFull == 1, "the tell of 4 is a dead letter with reason mailboxFull")
        gate.signal()
        #expect(eventually { seen.withLock { $0 } == [0, 1, 2, 3] })
        #expect(ref.trySend(6).isAccepted)
        #expect(eventually { seen.withLock { $0 } == [0, 1, 2, 3, 6] })
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
        #expect(report.delivered == 5 && report.deadLettered == 1)
    }

    @Test("send waits for room; waiting senders get in in the order they started waiting, ahead of later trySends")
    func sendWaitsInOrder() async throws {
        let (system, ref, gate, seen) = try await fullBoundedActor()
        var senders: [Task<Void, any Error>] = []
        for (index, value) in [10, 11, 12].enumerated() {
            senders.append(Task { try await ref.send(value) })
            #expect(await settled { waiters(of: ref) == index + 1 }, "sender \(value) is waiting, in order")
        }
        guard case .full(99) = ref.trySend(99) else { Issue.record("trySend overtook waiting senders"); return }
        gate.signal()
        for sender in senders { try await sender.value }
        #expect(await settled { seen.withLock { $0 }.count == 7 })
        #expect(seen.withLock { $0 } == [0, 1, 2, 3, 10, 11, 12])
        #expect(system.shutdown().isBalanced)
    }

    @Test("a cancelled wait hands the message back; a stop hands waiting messages back as .stopped")
    func cancelAndStop() async throws {
        let (system, ref, gate, _) = try await fullBoundedActor()
        let cancelled = Task { () -> SendError<Int>? in
            do throws(SendError<Int>) { try await ref.send(20); return nil } catch { return error }
        }
        #expect(await settled { waiters(of: ref) == 1 })
        cancelled.cancel()
        guard case .cancelled(20)? = await cancelled.value else { Issue.record("the cancelled send did not hand 20 back"); return }
        #expect(waiters(of: ref) == 0)

        let stopped = Task { () -> SendError<Int>? in
            do throws(SendError<Int>) { try await ref.send(21); return nil } catch { return error }
        }
        #expect(await settled { waiters(of: ref) == 1 })
        ref.stop()
        gate.signal()
        guard case .stopped(21)? = await stopped.value else { Issue.record("the waiting send was not handed back as .stopped"); return }
        guard case .stopped(22) = ref.trySend(22) else { Issue.record("trySend to a stopped actor"); return }
        do throws(SendError<Int>) {
            try await ref.send(23)
            Issue.record("send to a stopped actor returned")
        } catch {
            #expect(error.message == 23)
            #expect(String(describing: error).contains("stopped"))
        }
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
        #expect(report.delivered == 1, "0 was in hand when the stop came; 1-3 are dead letters")
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a sender that finds the mailbox full just before the actor's last drain is still admitted (no lost wake-up)")
    func senderRacingTheLastDrain() async throws {
        // Replays W2's gap (BoundedMailboxWaiters.swift) deterministically: the sender found
        // the ring full and is paused before recording itself; the actor drains the ring dry
        // and goes idle; then the sender records itself. Unless that record reschedules the
        // actor, nothing ever runs it again and `send` never returns.
        let deterministic = DeterministicScheduler(seed: 11)
        let system = makeDeterministicSystem(deterministic)
        let seen = Lock<[Int]>([])
        let ref = try system.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded)) { (m: Int, _) in seen.withLock { $0.append(m) } }
        for i in 0..<3 { #expect(ref.trySend(i) == .accepted) }
        #expect(ref.trySend(99) == .full(99), "3 of 4 slots: full")
        let paused = Atomic<Bool>(false)
        let resume = DispatchSemaphore(value: 0)
        BoundedMailboxWaitersTestHook.arm { paused.store(true, ordering: .releasing); resume.wait() }
        let sender = Task.detached { try await ref.send(3) }
        #expect(await settled { paused.load(ordering: .acquiring) })
        try deterministic.runUntilQuiescent()  // the last drain: 0, 1, 2; nobody waits yet
        #expect(seen.withLock { $0 } == [0, 1, 2])
        resume.signal()  // the sender records itself now, after the actor went idle
        // The sender's claim scheduled a turn: driving the scheduler admits and delivers 3.
        let admitted = await settled {
            (try? deterministic.runUntilQuiescent()) != nil && seen.withLock { $0 } == [0, 1, 2, 3]
        }
        #expect(admitted, "the waiting sender was never admitted")
        let report = system.shutdown()  // (a sender still waiting would get .stopped back here)
        let sent: Void? = try? await sender.value
        #expect(sent != nil && report.isBalanced)
    }
#endif

    @Test("8 producers flood a slow bounded actor with send: nothing lost, per-sender order held, the mailbox never grows past its ring")
    func floodWithBackPressure() async throws {
        let system = try makeSystem()
        let producers = 8
        let perProducer = runningUnderSanitizer() ? 300 : 3_000
        let capacity = 64
        let lastSeen = Lock<[Int]>(Array(repeating: -1, count: producers))
        let outOfOrder = Atomic<Int>(0)
        let received = Atomic<Int>(0)
        let ref = try system.spawn(options: SpawnOptions(mailboxCapacity: capacity, mailboxKind: .bounded)) { (message: Int, _) in
            let producer = message / 1_000_000, sequence = message % 1_000_000
            lastSeen.withLock { last in
                if sequence != last[producer] + 1 { outOfOrder.add(1, ordering: .relaxed) }
                last[producer] = sequence
            }
            var spin = 0
            for k in 0..<200 { spin &+= k }  // a slow consumer
            _ = spin
            received.add(1, ordering: .relaxed)
        }
        let maxDepth = Lock(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for producer in 0..<producers {
                group.addTask {
                    for sequence in 0..<perProducer {
                        try await ref.send(producer * 1_000_000 + sequence)
                        let depth = ref.mailboxDepth
                        maxDepth.withLock { $0 = Swift.max($0, depth) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await settled { received.load(ordering: .relaxed) == producers * perProducer })
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        #expect(cell.mailbox.overflowSendCount == 0, "a bounded mailbox never overflows")
        let deepest = maxDepth.withLock { $0 }
        #expect(deepest <= capacity, "depth \(deepest) (ring \(capacity))")
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == producers * perProducer && report.deadLettered == 0, "\(report)")
    }

    @Test("system messages never count against the bound: a watcher with a full bounded mailbox still learns of a termination")
    func systemMessagesBypassTheBound() throws {
        let system = try makeSystem()
        let gate = DispatchSemaphore(value: 0)
        let terminated = Lock(0)
        final class Watcher: EventActor {
            let gate: DispatchSemaphore, terminated: Lock<Int>, watched: ActorRef<Int>
            var first = true
            init(gate: DispatchSemaphore, terminated: Lock<Int>, watched: ActorRef<Int>) {
                self.gate = gate; self.terminated = terminated; self.watched = watched
            }
            func preStart(context: ActorContext<Int>) { context.watch(watched) }
            func receive(_ message: Int, context: ActorContext<Int>) { if first { first = false; gate.wait() } }
            func receiveSignal(_ signal: Signal, context: ActorContext<Int>) {
                if case .terminated = signal { terminated.withLock { $0 += 1 } }
            }
        }
        let watched = try system.spawn { (_: Int, _) in }
        let watcher = try system.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded)) {
            Watcher(gate: gate, terminated: terminated, watched: watched)
        }
        watcher.tell(0)
        #expect(eventually { inHandWithNothingQueued(watcher) })
        for i in 1...3 { #expect(watcher.trySend(i).isAccepted) }
        guard case .full = watcher.trySend(4) else { Issue.record("the watcher's mailbox is not full"); return }
        watched.stop()
        gate.signal()
        #expect(eventually { terminated.withLock { $0 } == 1 })
        #expect(system.shutdown().isBalanced)
    }

    // MARK: a stop and the waiting senders (N1)

    @Test("stop hands every waiting sender its message back at once (.stopped), while the turn in hand still runs; a send after the stop is refused at once")
    func stopFailsWaitersAtOnce() async throws {
        // An actor blocked in a turn, 7 queued, 20 senders waiting in send: none may wait
        // for the turn to end (it never does, here).
        for mode in [StopMode.immediately, .afterDrainingMailbox] {
            let system = try makeSystem()
            let gate = DispatchSemaphore(value: 0)
            let seen = Lock<[Int]>([])
            let ref = try system.spawn(options: SpawnOptions(mailboxCapacity: 8, mailboxKind: .bounded)) { Recorder(gate: gate, seen: seen) }
            ref.tell(0)
            #expect(await settled { inHandWithNothingQueued(ref) })
            for i in 1...7 { #expect(ref.trySend(i).isAccepted, "room for capacity − 1 = 7") }
            let outcomes = Probe<SendError<Int>?>()
            let senders = (100..<120).map { sendRecording($0, to: ref, into: outcomes) }
            #expect(await settled { waiters(of: ref) == 20 }, "\(mode): 20 senders waiting")
            ref.stop(mode)
            // The gate is still shut: the turn holds message 0 for as long as this test likes.
            let returned = await settled(within: .seconds(5)) { outcomes.count == 20 }
            #expect(returned, "\(mode): \(outcomes.count) of 20 waiting senders returned while the turn ran")
            #expect(ref.mailboxDepth == 1 + 7, "\(mode): the turn is still in message 0, 1-7 still queued")
            var handedBack: [Int] = []
            for outcome in outcomes.values {
                guard case .stopped(let message)? = outcome else { Issue.record("\(mode): \(String(describing: outcome))"); continue }
                handedBack.append(message)
            }
            #expect(handedBack.sorted() == Array(100..<120), "\(mode): every waiting message handed back, once")
            #expect(waiters(of: ref) == 0)
            let late = Probe<SendError<Int>?>()
            _ = sendRecording(200, to: ref, into: late)
            #expect(await settled(within: .seconds(5)) { late.count == 1 }, "\(mode): a send after the stop waited")
            if case .stopped(200)? = late.values.first {} else { Issue.record("\(mode): \(late.values)") }
            gate.signal()
            for sender in senders { await sender.value }
            let report = system.shutdown()
            #expect(report.isBalanced, "\(mode): \(report)")
            if mode == .immediately {
                #expect(seen.withLock { $0 } == [0])
                #expect(report.delivered == 1 && report.deadLettered == 7, "\(mode): \(report)")
            } else {
                #expect(seen.withLock { $0 } == Array(0...7))
                #expect(report.delivered == 8 && report.deadLettered == 0, "\(mode): \(report)")
            }
        }
    }

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a sender recording itself as a waiter while a stop runs is handed its message back by that stop, not left for the turn")
    func senderRecordingItselfDuringTheStop() async throws {
        // The interleaving: the sender found the ring full and holds the waiters' lock,
        // about to record itself (the hook); a stop on another thread closes the mailbox
        // (and its failAll then waits for the lock); the sender records itself after the
        // close; the stop's failAll takes the record. (The hook waits for the close itself,
        // a few instructions, instead of blocking a thread of Swift's pool on the test.)
        let (system, ref, gate, _) = try await fullBoundedActor()
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        let closedBeforeRecord = Atomic<Bool>(false)
        let stopped = DispatchSemaphore(value: 0)
        BoundedMailboxWaitersTestHook.arm(at: .beforeRecord) {
            Thread { ref.stop(); stopped.signal() }.start()
            // Bounded: a stop that waited for this lock before closing would never close.
            let deadline = ContinuousClock.now + .seconds(5)
            while !cell.queue.isClosed, ContinuousClock.now < deadline { sched_yield() }
            closedBeforeRecord.store(cell.queue.isClosed, ordering: .releasing)
        }
        let outcomes = Probe<SendError<Int>?>()
        let sender = sendRecording(30, to: ref, into: outcomes)
        #expect(await settled(within: .seconds(5)) { outcomes.count == 1 }, "the waiter was left for the turn")
        let hookRan = closedBeforeRecord.load(ordering: .acquiring)
        #expect(hookRan, "the hook ran: the close came between the check and the record")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        await expectHandedBack(30, outcomes: outcomes, sender: sender, ref: ref, gate: gate, system: system)
    }
#endif

#if DEBUG  // arms a test hook, which release builds compile out
    @Test("a sender that found the mailbox full and asks to wait after a stop ran is refused at once")
    func senderWaitingAfterTheStop() async throws {
        // The other interleaving: the sender found the ring full; before it takes the
        // waiters' lock (the hook) a stop runs to its end, nobody waiting yet; then the
        // sender goes on.
        let (system, ref, gate, _) = try await fullBoundedActor()
        let stoppedInTheGap = Atomic<Bool>(false)
        BoundedMailboxWaitersTestHook.arm(at: .beforeLock) {
            ref.stop()
            stoppedInTheGap.store(true, ordering: .releasing)
        }
        let outcomes = Probe<SendError<Int>?>()
        let sender = sendRecording(31, to: ref, into: outcomes)
        #expect(await settled(within: .seconds(5)) { outcomes.count == 1 }, "the late waiter was left for the turn")
        let hookRan = stoppedInTheGap.load(ordering: .acquiring)
        #expect(hookRan, "the hook ran: the stop came between the full ring and the waiters' lock")
        await expectHandedBack(31, outcomes: outcomes, sender: sender, ref: ref, gate: gate, system: system)
    }
#endif

    /// The end of a stop racing a sender of `fullBoundedActor`: the sender got `.stopped`
    /// with its own message, nobody waits, and once the blocked turn ends the books balance
    /// (the one message delivered, the three queued dead-lettered).
    func expectHandedBack(_ value: Int, outcomes: Probe<SendError<Int>?>, sender: Task<Void, Never>,
                          ref: ActorRef<Int>, gate: DispatchSemaphore, system: ActorSystem) async {
        if case .stopped(value)? = outcomes.values.first {} else { Issue.record("\(outcomes.values)") }
        #expect(waiters(of: ref) == 0)
        gate.signal()
        await sender.value
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 1 && report.deadLettered == 3, "\(report)")
    }

    @Test("a parent's stop hands its bounded child's waiting senders their messages back at once")
    func parentStopFailsChildWaiters() async throws {
        let system = try makeSystem()
        let gate = DispatchSemaphore(value: 0)
        let seen = Lock<[Int]>([])
        let children = Probe<ActorRef<Int>>()
        final class Parent: EventActor {
            let gate: DispatchSemaphore, seen: Lock<[Int]>, children: Probe<ActorRef<Int>>
            init(gate: DispatchSemaphore, seen: Lock<[Int]>, children: Probe<ActorRef<Int>>) {
                self.gate = gate; self.seen = seen; self.children = children
            }
            func preStart(context: ActorContext<Int>) throws {
                let (gate, seen) = (gate, seen)
                children.record(try context.spawn(options: SpawnOptions(mailboxCapacity: 4, mailboxKind: .bounded)) { Recorder(gate: gate, seen: seen) })
            }
            func receive(_ message: Int, context: ActorContext<Int>) {}
        }
        let parent = try system.spawn { Parent(gate: gate, seen: seen, children: children) }
        #expect(await settled { children.count == 1 })
        let child = try #require(children.values.first)
        child.tell(0)
        #expect(await settled { inHandWithNothingQueued(child) })
        for i in 1...3 { #expect(child.trySend(i).isAccepted) }
        let outcomes = Probe<SendError<Int>?>()
        let senders = (40..<45).map { sendRecording($0, to: child, into: outcomes) }
        #expect(await settled { waiters(of: child) == 5 })
        parent.stop()
        let returned = await settled(within: .seconds(5)) { outcomes.count == 5 }
        #expect(returned, "\(outcomes.count) of 5 waiting senders returned while the child's turn ran")
        #expect(outcomes.values.compactMap { if case .stopped(let m)? = $0 { m } else { nil } }.sorted() == Array(40..<45))
        gate.signal()
        for sender in senders { await sender.value }
        let report = system.shutdown()
        #expect(report.isBalanced, "\(report)")
    }
}
