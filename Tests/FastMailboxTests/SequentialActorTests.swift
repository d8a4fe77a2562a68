// Sequential (thread-style) actors: lifecycle, threads, watch, ask, accounting.

import Testing
import Foundation
import Synchronization
import Logging
import MNScheduler
import MallocCounter
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport

/// Watches the actors it is told about and records their terminations.
private final class TerminationRecorder: EventActor {
    enum Message: Sendable { case watch(ActorRef<Int>) }
    let probe: Probe<Terminated>
    init(_ probe: Probe<Terminated>) { self.probe = probe }
    func receive(_ message: Message, context: ActorContext<Message>) throws {
        switch message {
        case .watch(let ref): context.watch(ref)
        }
    }
    func receiveSignal(_ signal: Signal, context: ActorContext<Message>) throws {
        if case .terminated(let t) = signal { probe.record(t) }
    }
}

private struct BodyFailure: Error, CustomStringConvertible {
    var description: String { "the body gave up" }
}

private enum Arithmetic: Sendable {
    case double(Int, replyTo: ActorRef<Int>)
}

@Suite("SequentialActor", .serialized) struct SequentialActorTests {
    @Test("a sequential actor receives every message in the order one sender sent it")
    func receivesInOrder() throws {
        let system = try makeSystem()
        let probe = Probe<Int>()
        let ref = try system.spawn(options: SpawnOptions(name: "looper")) { (inbox: Inbox<Int>) in
            for await message in inbox { probe.record(message) }
        }
        for i in 0..<2_000 { ref.tell(i) }
        #expect(eventually { probe.count == 2_000 })
        #expect(probe.values == Array(0..<2_000))
        let report = system.shutdown()
        #expect(report.delivered == 2_000)
        #expect(report.deadLettered == 0)
        #expect(report.left == 0)
        #expect(report.actorsNotStopped == 0)
    }

    @Test("a sequential actor's body runs on the scheduler's workers, not on a thread of its own")
    func bodyRunsOnWorkers() throws {
        let system = try makeSystem(workers: 2)
        let onWorker = Probe<Bool>()
        let workerIndices = Probe<Int>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            onWorker.record(system.scheduler.isCurrentThreadWorker)
            for await _ in inbox {
                onWorker.record(system.scheduler.isCurrentThreadWorker)
                workerIndices.record(Scheduler.currentWorkerIndex ?? -1)
            }
        }
        for i in 0..<50 { ref.tell(i) }
        #expect(eventually { onWorker.count == 51 })
        #expect(onWorker.values.allSatisfy { $0 })
        #expect(workerIndices.values.allSatisfy { (0..<2).contains($0) })
        system.shutdown()
    }

    @Test("1,000 sequential actors on a 2-worker scheduler all make progress (no thread per actor)")
    func thousandActorsOnTwoWorkers() throws {
        let system = try makeSystem(workers: 2)
        let probe = Probe<Int>()
        var refs: [ActorRef<Int>] = []
        for index in 0..<1_000 {
            refs.append(try system.spawn { (inbox: Inbox<Int>) in
                let first = try await inbox.receive()
                let second = try await inbox.receive()
                probe.record(index * 10 + first + second)
            })
        }
        // Every actor is parked in its first receive at the same time: 1,000 waiters, 2 threads.
        for ref in refs { ref.tell(1) }
        for ref in refs { ref.tell(2) }
        #expect(eventually { probe.count == 1_000 })
        #expect(Set(probe.values) == Set((0..<1_000).map { $0 * 10 + 3 }))
        #expect(eventually { system.metrics.liveActors == 0 })
        let report = system.shutdown()
        #expect(report.delivered == 2_000)
        #expect(report.deadLettered == 0)
    }

    @Test("a body that returns stops the actor with reason finished, and watchers are told")
    func returningBodyFinishes() throws {
        let system = try makeSystem()
        let terminations = Probe<Terminated>()
        let watcher = try system.spawn { TerminationRecorder(terminations) }
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            _ = try await inbox.receive()
        }
        watcher.tell(.watch(ref))
        ref.tell(1)
        #expect(eventually { terminations.count == 1 })
        #expect(terminations.values.first?.id == ref.id)
        #expect(terminations.values.first?.reason == .finished)
        #expect(eventually { system.metrics.liveActors == 1 })  // only the watcher
        system.shutdown()
    }

    @Test("a body that throws stops the actor, and watchers see the failure with the error")
    func throwingBodyFails() throws {
        let system = try makeSystem()
        let terminations = Probe<Terminated>()
        let watcher = try system.spawn { TerminationRecorder(terminations) }
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            _ = try await inbox.receive()
            throw BodyFailure()
        }
        watcher.tell(.watch(ref))
        ref.tell(1)
        #expect(eventually { terminations.count == 1 })
        #expect(terminations.values.first?.reason == .failed("the body gave up"))
        ref.tell(2)  // stopped: dead letter
        #expect(eventually { system.deadLetters.count == 1 })
        let report = system.shutdown()
        #expect(report.delivered == 2)  // 1 to the body, 1 (.watch) to the watcher
        #expect(report.deadLettered == 1)
    }

    @Test("stop ends a pending receive with ActorStoppedError and watchers see reason stopped")
    func stopEndsPendingReceive() throws {
        let system = try makeSystem()
        let terminations = Probe<Terminated>()
        let errors = Probe<String>()
        let watcher = try system.spawn { TerminationRecorder(terminations) }
        let entered = Probe<Bool>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            entered.record(true)
            do {
                _ = try await inbox.receive()
            } catch let error as ActorStoppedError {
                errors.record(error.actorName)
                throw error
            }
        }
        watcher.tell(.watch(ref))
        #expect(eventually { entered.count == 1 })
        ref.stop()
        #expect(eventually { terminations.count == 1 })
        #expect(errors.values == [ref.name])
        #expect(terminations.values.first?.reason == .stopped)
        system.shutdown()
    }

    @Test("stop cancels the body's task, so a body that sleeps instead of receiving ends too")
    func stopCancelsSleepingBody() throws {
        let system = try makeSystem()
        let outcome = Probe<String>()
        let entered = Probe<Bool>()
        let ref = try system.spawn { (_: Inbox<Int>) in
            entered.record(true)
            do {
                try await Task.sleep(for: .seconds(60))
                outcome.record("slept")
            } catch {
                outcome.record("cancelled")
            }
        }
        #expect(eventually { entered.count == 1 })
        ref.stop()
        #expect(eventually { outcome.count == 1 })
        #expect(outcome.values == ["cancelled"])
        #expect(eventually { system.metrics.liveActors == 0 })
        system.shutdown()
    }

    @Test("an immediate stop racing with the body's start always ends the body: before the start it never runs, after it its task is cancelled")
    func stopRacingWithStartEndsEveryBody() throws {
        let system = try makeSystem()
        let count = 300
        let started = Atomic<Int>(0), ended = Atomic<Int>(0)
        var refs: [ActorRef<Int>] = []
        for i in 0..<count {
            refs.append(try system.spawn { (_: Inbox<Int>) in
                started.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .seconds(600))  // ends only if its task is cancelled
                ended.add(1, ordering: .relaxed)
            })
            if i.isMultiple(of: 2) { refs[i].stop() }  // while its first turn may be starting the body
        }
        for i in stride(from: 1, to: count, by: 2) { refs[i].stop() }  // later: most bodies have started
        let allLeft = eventually { system.metrics.liveActors == 0 }
        if !allLeft {
            // It was rare under ThreadSanitizer with the CPUs loaded (the closing note of
            // stop 18): a stop between startBody's load and CAS, now fixed and pinned
            // deterministically by stopInsideStartBodysWindowEndsTheActor. What each actor
            // still registered shows, should it fail again.
            for (i, ref) in refs.enumerated() {
                let cell = ref.identity as! SequentialActorCell<Int>
                if !cell.leftRegistry {
                    let wake = cell.wake.load(ordering: .acquiring)
                    print("stopRacingWithStart: actor \(i) still registered: wake=\(String(wake, radix: 2)) phase=\(cell.phase) state=\(cell.stateSnapshot) task=\(cell.bodyTask != nil) started=\(started.load(ordering: .relaxed)) ended=\(ended.load(ordering: .relaxed))")
                }
            }
        }
        #expect(allLeft)
        #expect(ended.load(ordering: .relaxed) == started.load(ordering: .relaxed))
        let report = system.shutdown(timeout: .seconds(30))
        #expect(report.actorsNotStopped == 0)
    }

    #if DEBUG
    @Test("an immediate stop between the first turn's look at the wake word and its CAS still ends the actor (the body never runs)")
    func stopInsideStartBodysWindowEndsTheActor() throws {
        // The rare hang of stopRacingWithStartEndsEveryBody, made deterministic: the stop
        // sets `cancelRequested` after startBody loaded the word (phase notStarted), so its
        // CAS fails. Were startBody to give up there, the phase would stay notStarted with
        // no task and no later turn: the actor would never leave the registry.
        let system = try makeSystem()
        let stopped = Atomic<Bool>(false)
        SequentialStartTestHook.arm(system) { cell in
            (cell as! SequentialActorCell<Int>).stop(.immediately)
            stopped.store(true, ordering: .releasing)
        }
        let started = Atomic<Int>(0)
        let ref = try system.spawn { (_: Inbox<Int>) in
            started.add(1, ordering: .relaxed)
            try? await Task.sleep(for: .seconds(600))
        }
        #expect(eventually { stopped.load(ordering: .acquiring) }, "the hook ran the stop in the window")
        #expect(eventually { system.metrics.liveActors == 0 })
        #expect(started.load(ordering: .relaxed) == 0)
        ref.tell(1)  // after the stop: a dead letter
        let cell = ref.identity as! SequentialActorCell<Int>
        #expect(SequentialWake.phase(cell.wake.load(ordering: .acquiring)) == SequentialWake.endedBeforeStart)
        let report = system.shutdown(timeout: .seconds(30))
        #expect(report.actorsNotStopped == 0)
        #expect(report.deadLettered == 1)
    }
    #endif

    @Test("messages left in the inbox (queued or set aside) when the body ends go to dead letters, and so do later tells")
    func leftoversAreDeadLettered() throws {
        let system = try makeSystem()
        let received = Probe<Int>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            // Sets 1 and 2 aside, takes 3, then ends with 1, 2 buffered and 4, 5 maybe queued.
            received.record(try await inbox.receive { $0 == 3 })
        }
        for i in 1...5 { ref.tell(i) }
        #expect(eventually { system.metrics.liveActors == 0 })
        #expect(received.values == [3])
        #expect(eventually { system.deadLetters.count == 4 })
        ref.tell(6)
        #expect(system.deadLetters.count == 5)
        let report = system.shutdown()
        #expect(report.delivered == 1)
        #expect(report.deadLettered == 5)
        #expect(report.left == 0)
    }

    @Test("ask works against a sequential actor")
    func askSequentialActor() async throws {
        let system = try makeSystem()
        let ref = try system.spawn { (inbox: Inbox<Arithmetic>) in
            for await request in inbox {
                switch request {
                case .double(let n, let replyTo): replyTo.tell(n * 2)
                }
            }
        }
        let answer = try await ref.ask { Arithmetic.double(21, replyTo: $0) }
        #expect(answer == 42)
        ref.stop()
        #expect(await eventually { system.metrics.liveActors == 0 })
        system.shutdown()
    }

    @Test("a sequential actor can ask another actor from its body and go on receiving")
    func bodyAsksAnotherActor() throws {
        let system = try makeSystem()
        let doubler = try system.spawn { (request: Arithmetic, _) in
            switch request {
            case .double(let n, let replyTo): replyTo.tell(n * 2)
            }
        }
        let results = Probe<Int>()
        let ref = try system.spawn { (inbox: Inbox<Int>) in
            for await n in inbox {
                results.record(try await doubler.ask { Arithmetic.double(n, replyTo: $0) })
            }
        }
        for i in 1...20 { ref.tell(i) }
        #expect(eventually { results.count == 20 })
        #expect(results.values == (1...20).map { $0 * 2 })
        system.shutdown()
    }

    @Test("shutdown lets sequential actors take what is queued, waits for them and accounts every message")
    func shutdownAccounting() throws {
        let system = try makeSystem()
        let received = Atomic<Int>(0)
        var refs: [ActorRef<Int>] = []
        for _ in 0..<20 {
            refs.append(try system.spawn { (inbox: Inbox<Int>) in
                for await _ in inbox { received.wrappingAdd(1, ordering: .relaxed) }
            })
        }
        let sent = 20 * 500
        let targets = refs
        runOnThreads(4) { thread in
            for i in 0..<(sent / 4) { targets[(i + thread) % targets.count].tell(i) }
        }
        let report = system.shutdown()
        #expect(report.actorsNotStopped == 0)
        #expect(report.left == 0)
        #expect(report.delivered == received.load(ordering: .relaxed))
        #expect(report.delivered + report.deadLettered + report.left == sent)
        refs[0].tell(0)  // after shutdown: a dead letter
        #expect(system.deadLetters.count == report.deadLettered + 1)
    }

    @Test("spawning a sequential actor with a taken name or a bad capacity is refused")
    func spawnErrors() throws {
        let system = try makeSystem()
        _ = try system.spawn(options: SpawnOptions(name: "unique")) { (inbox: Inbox<Int>) in for await _ in inbox {} }
        #expect(throws: ActorSystemError.duplicateName("unique")) {
            try system.spawn(options: SpawnOptions(name: "unique")) { (inbox: Inbox<Int>) in for await _ in inbox {} }
        }
        #expect(throws: ActorSystemError.invalidMailboxCapacity(3)) {
            try system.spawn(options: SpawnOptions(mailboxCapacity: 3)) { (inbox: Inbox<Int>) in for await _ in inbox {} }
        }
        system.shutdown()
        #expect(throws: ActorSystemError.shutDown) {
            try system.spawn { (inbox: Inbox<Int>) in for await _ in inbox {} }
        }
    }
}

extension SequentialActorTests {
    @Test("a shutdown that times out on a busy sequential actor neither crashes nor strands its task")
    func shutdownTimeoutWithBusyBody() async throws {
        let system = try makeSystem()
        let done = Probe<String>()
        _ = try system.spawn { (inbox: Inbox<Int>) in
            done.record("body started")
            for await _ in inbox {}  // ends when shutdown closes the mailbox
            // Not cancellable: resumes 300 ms later, after the scheduler has shut down, so
            // its continuation is enqueued on a task executor whose workers are gone.
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { c.resume() }
            }
            done.record("body ended")
        }
        #expect(await eventually { done.count == 1 }, "the body must be running before the shutdown")
        let report = system.shutdown(timeout: .milliseconds(50))
        #expect(report.left == 0)
        #expect(system.scheduler.isShutDown)
        #expect(await eventually(timeout: .seconds(60)) { done.count == 2 },
                "the body's last job ran on Swift's pool instead of trapping")
        #expect(done.values == ["body started", "body ended"])
    }
}

extension SequentialActorTests {
    @Test("two warm sequential actors bounce messages without an allocation: receive, wait and wake-up allocate nothing")
    func pingPongAllocatesNothing() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        // One worker and no blocking detection: both bodies, their wake-ups and the lanes
        // that run them all run on that worker's thread, which the per-thread counter sees.
        var configuration = SchedulerConfiguration()
        configuration.workers = 1
        configuration.blockingThresholdMilliseconds = 0
        let system = try ActorSystem(configuration: configuration,
                                     logger: Logger(label: "fastmailbox.tests") { _ in SwiftLogNoOpLogHandler() })
        let warmUp = 1_000, rounds = 10_000
        // Written by the pinger's body only, read after `done`: preallocated, so taking a
        // reading allocates nothing.
        final class Readings: @unchecked Sendable {
            var threads: (UInt, UInt) = (0, 0)
            var allocations: (UInt64, UInt64) = (0, 0)
        }
        let readings = Readings()
        let done = DispatchSemaphore(value: 0)
        final class Peer: @unchecked Sendable { var ref: ActorRef<Int>? }  // set before the first message
        let peerOfPinger = Peer(), peerOfPonger = Peer()
        let pinger: ActorRef<Int> = try system.spawn { inbox in
            for await k in inbox {
                if k == warmUp { readings.threads.0 = UInt(pthread_self()); readings.allocations.0 = malloc_counter_thread_allocations() }
                if k == warmUp + rounds { readings.allocations.1 = malloc_counter_thread_allocations(); readings.threads.1 = UInt(pthread_self()) }
                if k == warmUp + rounds { done.signal(); return }
                peerOfPinger.ref!.tell(k + 1)
            }
        }
        let ponger: ActorRef<Int> = try system.spawn { inbox in
            for await k in inbox { peerOfPonger.ref!.tell(k + 1) }
        }
        peerOfPinger.ref = ponger
        peerOfPonger.ref = pinger
        pinger.tell(0)
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(readings.threads.0 == readings.threads.1, "the bodies moved between threads")
        let allocations = readings.allocations.1 &- readings.allocations.0
        #expect(allocations == 0, "\(allocations) allocations in \(rounds) messages")
        let report = system.shutdown()
        #expect(report.deadLettered == 0)
    }
}
