// Inbox: receive, selective receive, timeouts, the for-await loop and stopping.
// SignalingProbe (FastMailboxTestSupport): a body's records wake the test, no polling.

import Testing
import Foundation
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport

/// A flag a test opens to let a body go on (bodies poll it with Task.yield()).
private final class BodyGate: Sendable {
    private let isOpen = Atomic<Bool>(false)
    func open() { isOpen.store(true, ordering: .releasing) }
    func pass() async {
        while !isOpen.load(ordering: .acquiring) { await Task.yield() }
    }
}

/// The last sequence number seen per sender. Touched only by one actor body (the inbox's
/// single consumer): no lock, so ThreadSanitizer checks that successive receives are ordered.
private final class SequenceTracker: @unchecked Sendable {
    private var last: [Int]
    init(senders: Int) { last = Array(repeating: -1, count: senders) }
    /// Records `sequence` for `sender`; false when it is not the successor of the last one.
    func advance(sender: Int, to sequence: Int) -> Bool {
        defer { last[sender] = sequence }
        return sequence == last[sender] + 1
    }
}

@Suite("Inbox", .serialized) struct InboxTests {
    @Test("a selective receive takes the first match and keeps the skipped messages in order")
    func selectiveReceiveKeepsOrder() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            let four = try await inbox.receive { $0 == 4 }
            probe.record("match \(four), buffered \(inbox.bufferedCount)")
            let even = try await inbox.receive { $0 % 2 == 0 }  // 2, from the buffer
            probe.record("match \(even)")
            for _ in 0..<4 { probe.record("\(try await inbox.receive())") }
        }
        for i in 1...6 { ref.tell(i) }
        #expect(probe.waitForCount(6))
        #expect(probe.values == ["match 4, buffered 3", "match 2", "1", "3", "5", "6"])
        let report = system.shutdown()
        #expect(report.delivered == 6)
        #expect(report.deadLettered == 0)
    }

    @Test("receive with a timeout throws ReceiveTimeout naming it, and a later message is still received")
    func receiveTimeout() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let ref = try system.spawn(options: SpawnOptions(name: "patient")) { (inbox: Inbox<Int>) in
            do {
                let early = try await inbox.receive(timeout: .milliseconds(20))
                probe.record("unexpected \(early)")
            } catch let timeout as ReceiveTimeout {
                probe.record("timeout \(timeout.timeout) in \(timeout.actorName)")
            }
            probe.record("got \(try await inbox.receive(timeout: .seconds(30)))")
        }
        #expect(probe.waitForCount(1))
        ref.tell(7)
        #expect(probe.waitForCount(2))
        #expect(probe.values == ["timeout \(Duration.milliseconds(20)) in patient", "got 7"])
        system.shutdown()
    }

    @Test("a selective receive that times out keeps the skipped messages for later receives")
    func selectiveTimeoutKeepsBuffer() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            _ = try await inbox.receive { $0 == 2 }  // waits for 2, so 1 is already set aside
            do {
                _ = try await inbox.receive(timeout: .milliseconds(20)) { $0 > 100 }
            } catch is ReceiveTimeout {
                probe.record("timeout, buffered \(inbox.bufferedCount)")
            }
            probe.record("\(try await inbox.receive())")
            probe.record("\(try await inbox.receive())")
        }
        ref.tell(1)
        ref.tell(2)
        ref.tell(3)
        #expect(probe.waitForCount(3))
        #expect(probe.values == ["timeout, buffered 2", "1", "3"])
        system.shutdown()
    }

    @Test("a timed receive that is answered in time returns the message, and its timer never fires into a later wait")
    func timedReceiveAnswered() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            probe.record("ready")
            probe.record("got \(try await inbox.receive(timeout: .milliseconds(30)))")
            // The first receive's timer expires while this one waits: it must not wake it.
            probe.record("got \(try await inbox.receive(timeout: .seconds(30)))")
        }
        #expect(probe.waitForCount(1))
        ref.tell(1)
        #expect(probe.waitForCount(2))
        usleep(100_000)  // let the first timer's deadline pass (not an assertion on timing)
        ref.tell(2)
        #expect(probe.waitForCount(3))
        #expect(probe.values == ["ready", "got 1", "got 2"])
        system.shutdown()
    }

    @Test("a zero timeout polls: it throws at once on an empty inbox and returns a queued message")
    func zeroTimeoutPolls() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let gate = BodyGate()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            do { _ = try await inbox.receive(timeout: .zero) } catch is ReceiveTimeout { probe.record("empty") }
            await gate.pass()
            probe.record("\(try await inbox.receive(timeout: .zero))")
        }
        #expect(probe.waitForCount(1))
        ref.tell(9)
        gate.open()
        #expect(probe.waitForCount(2))
        #expect(probe.values == ["empty", "9"])
        system.shutdown()
    }

    @Test("a body that cancels its own task gets what is already in the inbox, then a receive that would wait throws CancellationError")
    func selfCancelledReceiveThrows() throws {
        let system = try makeSystem()
        let outcomes = SignalingProbe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            _ = try await inbox.receive(where: { $0 == 2 })  // returns once 2 is in; 1 is set aside
            withUnsafeCurrentTask { $0?.cancel() }
            outcomes.record("then \(try await inbox.receive())")  // already there: returned
            do {
                _ = try await inbox.receive()  // nothing there: would have to wait
                outcomes.record("received")
            } catch is CancellationError {
                outcomes.record("CancellationError")
            } catch {
                outcomes.record("\(type(of: error))")
            }
        }
        ref.tell(1)
        ref.tell(2)
        #expect(outcomes.waitForCount(2))
        #expect(outcomes.values == ["then 1", "CancellationError"])
        let report = system.shutdown()
        #expect(report.delivered == 2)
    }

    @Test("the for-await loop ends when the actor is stopped")
    func forAwaitEndsOnStop() throws {
        let system = try makeSystem()
        let probe = SignalingProbe<String>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            for await message in inbox { probe.record("\(message)") }
            probe.record("ended")
        }
        ref.tell(1)
        ref.tell(2)
        #expect(probe.waitForCount(2))
        ref.stop()
        #expect(probe.waitForCount(3))
        #expect(probe.values == ["1", "2", "ended"])
        #expect(eventually { system.metrics.liveActors == 0 })
        system.shutdown()
    }

    /// A sequential actor that takes one message, waits at `gate`, then loops over the rest;
    /// five messages are sent and the first has been taken when this returns.
    fileprivate func spawnGatedLoop() throws -> (ActorSystem, ActorRef<Int>, SignalingProbe<Int>, SignalingProbe<Bool>, BodyGate) {
        let system = try makeSystem()
        let probe = SignalingProbe<Int>()
        let ended = SignalingProbe<Bool>()
        let gate = BodyGate()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            probe.record(try await inbox.receive())
            await gate.pass()
            for await message in inbox { probe.record(message) }
            ended.record(true)
        }
        for i in 1...5 { ref.tell(i) }
        #expect(probe.waitForCount(1))
        return (system, ref, probe, ended, gate)
    }

    @Test("stop after draining lets the body take what is queued, then the loop ends; later tells are dead letters")
    func stopAfterDraining() throws {
        let (system, ref, probe, ended, gate) = try spawnGatedLoop()
        ref.stop(.afterDrainingMailbox)
        ref.tell(6)
        #expect(system.deadLetters.count == 1)
        gate.open()
        #expect(ended.waitForCount(1))
        #expect(probe.values == [1, 2, 3, 4, 5])
        let report = system.shutdown()
        #expect(report.delivered == 5)
        #expect(report.deadLettered == 1)
    }

    @Test("an immediate stop makes the next receive throw and dead-letters what is still queued")
    func immediateStopDeadLetters() throws {
        let (system, ref, probe, ended, gate) = try spawnGatedLoop()
        ref.stop()
        gate.open()
        #expect(ended.waitForCount(1))
        #expect(probe.values == [1])
        #expect(eventually { system.deadLetters.count == 4 })
        let report = system.shutdown()
        #expect(report.delivered == 1)
        #expect(report.deadLettered == 4)
    }

    @Test("no wake-up is lost when many threads send to a receiver that keeps parking (stress)")
    func noLostWakeUps() throws {
        let system = try makeSystem()
        let threads = 4
        let perThread = underThreadSanitizer ? 1_000 : 10_000
        let last = SequenceTracker(senders: threads)
        let outOfOrder = Atomic<Int>(0)
        let count = Atomic<Int>(0)
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            for await message in inbox {
                let (thread, sequence) = (message / 1_000_000, message % 1_000_000)
                if !last.advance(sender: thread, to: sequence) { outOfOrder.wrappingAdd(1, ordering: .relaxed) }
                count.wrappingAdd(1, ordering: .relaxed)
            }
        }
        runOnThreads(threads) { thread in
            for i in 0..<perThread {
                ref.tell(thread * 1_000_000 + i)
                if i % 97 == 0 { usleep(10) }  // let the receiver drain and park again
            }
        }
        #expect(eventually { count.load(ordering: .relaxed) == threads * perThread })
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
        let report = system.shutdown()
        #expect(report.delivered == threads * perThread)
    }
}
