import Foundation
import Logging
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport

/// Awaiting an actor's end and the system's: `ref.terminated`, `gracefulShutdown`, what a
/// Terminated value says, and names freed by the time an end is seen.
@Suite("Async lifecycle", .serialized) struct AsyncLifecycleTests {
    @Test("await ref.terminated returns how the actor stopped, and at once when it already has")
    func terminatedFromPlainCode() async throws {
        let system = try makeSystem()
        let ref = try system.spawn(options: SpawnOptions(name: "failing", supervisor: .stop)) { (_: Int, _) in throw Boom() }
        async let ended = ref.terminated
        ref.tell(1)
        let termination = await ended
        #expect(termination == Terminated(id: ref.id, name: "failing", reason: .failed("boom")))
        #expect(await ref.terminated == termination)  // already stopped: at once, same value
        let stopped = try system.spawn { (_: Int, _) in }
        stopped.stop()
        #expect(await stopped.terminated.reason == .stopped)
        await system.gracefulShutdown()
    }

    @Test("await ref.terminated ends with systemShutDown when the system shuts down")
    func terminatedAtShutdown() async throws {
        let system = try makeSystem()
        let ref = try system.spawn(options: SpawnOptions(name: "idle")) { (_: Int, _) in }
        async let ended = ref.terminated
        await system.gracefulShutdown()
        #expect(await ended.reason == .systemShutDown)
        #expect(await ref.terminated.reason == .systemShutDown)  // after shutdown too
    }

    @Test("Terminated values with the same actor but different reasons are not equal")
    func terminatedEqualityIncludesReason() {
        let id = ActorID(rawValue: 7)
        let stopped = Terminated(id: id, name: "a", reason: .stopped)
        #expect(stopped == Terminated(id: id, name: "a", reason: .stopped))
        #expect(stopped != Terminated(id: id, name: "a", reason: .failed("x")))
        #expect(Terminated(id: id, name: "a", reason: .failed("x")) != Terminated(id: id, name: "a", reason: .failed("y")))
        #expect(Set([stopped, Terminated(id: id, name: "a", reason: .systemShutDown)]).count == 2)
    }

    @Test("a name is free again by the time the actor's end is awaited or watched")
    func nameReusableAfterTermination() async throws {
        let system = try makeSystem()
        // From plain code: stop, await, spawn a successor under the same name.
        for round in 0..<200 {
            let ref = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }
            for n in 0..<50 { ref.tell(n) }  // queued messages: the stop's drain takes a while
            ref.stop(round.isMultiple(of: 2) ? .immediately : .afterDrainingMailbox)
            _ = await ref.terminated
            #expect(throws: Never.self) { _ = try system.spawn(options: SpawnOptions(name: "reused")) { (_: Int, _) in }.stop() }
            _ = await system.lookup("reused", as: Int.self)?.terminated
        }
        // From a watcher: its Terminated handler respawns under the name.
        let failures = Atomic<Int>(0)
        let respawned = Atomic<Int>(0)
        let handledEnd = DispatchSemaphore(value: 0)
        enum Control: Sendable { case watch(ActorRef<Int>), ended }
        let watcher = try system.spawn(options: SpawnOptions(name: "watcher")) { (message: Control, context) in
            switch message {
            case .watch(let ref): context.watch(ref, with: .ended)
            case .ended:
                do {
                    _ = try context.system.spawn(options: SpawnOptions(name: "watched")) { (_: Int, _) in }.stop()
                    respawned.wrappingAdd(1, ordering: .relaxed)
                } catch { failures.wrappingAdd(1, ordering: .relaxed) }
                handledEnd.signal()
            }
        }
        for _ in 0..<100 {
            let ref = try system.spawn(options: SpawnOptions(name: "watched")) { (_: Int, _) in }
            watcher.tell(.watch(ref))
            for n in 0..<50 { ref.tell(n) }
            ref.stop()
            _ = await ref.terminated
            #expect(handledEnd.wait(timeout: .now() + 20) == .success)  // the watcher handled the end
            if let successor = system.lookup("watched", as: Int.self) { _ = await successor.terminated }
            if failures.load(ordering: .relaxed) > 0 { break }
            respawned.store(0, ordering: .relaxed)
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(await system.gracefulShutdown().isBalanced)
    }

    @Test("gracefulShutdown never holds a cooperative thread: shutdowns waiting on busy actors let other tasks run")
    func gracefulShutdownDoesNotBlockCooperativePool() async throws {
        // Each system's only actor spins until a task on Swift's pool opens the gate. If the
        // shutdowns held cooperative threads (more of them than the pool has), that task
        // could not run before their 10 s timeouts.
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let gate = Atomic<Bool>(false)
        var systems: [ActorSystem] = []
        for index in 0..<count {
            var configuration = SchedulerConfiguration()
            configuration.workers = 1
            let system = try ActorSystem(name: "s\(index)", configuration: configuration)
            let ref = try system.spawn(options: SpawnOptions(name: "busy")) { (_: Int, _) in
                while !gate.load(ordering: .acquiring) { usleep(200) }
            }
            ref.tell(1)
            systems.append(system)
        }
        let started = ContinuousClock.now
        let opener = Task {
            try? await Task.sleep(for: .milliseconds(200))
            gate.store(true, ordering: .releasing)
        }
        let reports = await withTaskGroup(of: ShutdownReport.self) { group in
            for system in systems { group.addTask { await system.gracefulShutdown(timeout: .seconds(10)) } }
            var all: [ShutdownReport] = []
            for await report in group { all.append(report) }
            return all
        }
        await opener.value
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(reports.count == count)
        #expect(reports.allSatisfy { $0.isBalanced && $0.actorsNotStopped == 0 && $0.delivered == 1 })
        for system in systems { #expect(system.shutdown().delivered == 1) }  // idempotent: the same report
    }
}
