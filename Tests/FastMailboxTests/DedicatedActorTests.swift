import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler

@Suite("Dedicated-thread actors (issue 10)", .serialized) struct DedicatedActorTests {
    @Test("a dedicated actor runs every turn on one thread of its own, never on a pool worker")
    func dedicatedActorOwnsItsThread() async throws {
        let system = try makeSystem()
        let threads = Probe<UInt>()
        final class ThreadRecorder: EventActor {
            let threads: Probe<UInt>
            init(_ threads: Probe<UInt>) { self.threads = threads }
            func preStart(context: ActorContext<CounterMessage>) { threads.record(UInt(pthread_self())) }
            func receive(_ message: CounterMessage, context: ActorContext<CounterMessage>) {
                threads.record(UInt(pthread_self()))
                if case .get(let replyTo) = message { replyTo.tell(threads.count) }
            }
        }
        let dedicated = try system.spawn(options: SpawnOptions(name: "owner", placement: .dedicatedThread)) { ThreadRecorder(threads) }
        let pool = SignalingProbe<UInt>()
        let poolActor = try system.spawn(options: SpawnOptions(name: "pool")) { (_: Int, _) in pool.record(UInt(pthread_self())) }
        for i in 0..<1_000 { dedicated.tell(.add(i)); poolActor.tell(i) }
        _ = try await dedicated.ask { .get(replyTo: $0) }
        #expect(pool.waitForCount(1_000))
        #expect(Set(threads.values).count == 1, "turns ran on \(Set(threads.values).count) threads")
        #expect(Set(threads.values).isDisjoint(with: Set(pool.values)))
        let report = system.shutdown()
        #expect(report.delivered == 2_001 && report.isBalanced, "\(report)")
    }

    @Test("a dedicated actor that blocks its thread does not hold up the pool's actors")
    func blockingDedicatedActorStarvesNobody() throws {
        let system = try makeSystem(workers: 1)
        let gate = TestGate()
        let blocker = try system.spawn(options: SpawnOptions(name: "blocker", placement: .dedicatedThread)) { ClosureActor { (_: Int, _) in gate.pass() } }
        blocker.tell(1)
        #expect(gate.waitForArrival())
        let count = Atomic<Int>(0)
        let allHandled = DispatchSemaphore(value: 0)
        let worker = try system.spawn(options: SpawnOptions(name: "worker")) { (_: Int, _) in
            if count.wrappingAdd(1, ordering: .relaxed).newValue == 10_000 { allHandled.signal() }
        }
        for i in 0..<10_000 { worker.tell(i) }
        #expect(allHandled.wait(timeout: .now() + 20) == .success)
        gate.open()
        #expect(system.shutdown().isBalanced)
    }

    @Test("a dedicated-thread spawn after shutdown throws shutDown")
    func dedicatedSpawnAfterShutdown() throws {
        let system = try makeSystem()
        system.shutdown()
        #expect(throws: ActorSystemError.shutDown) { try system.spawn(options: SpawnOptions(placement: .dedicatedThread)) { ClosureActor { (_: Int, _) in } } }
    }
}

@Suite("Main-thread actors (issue 10)", .serialized) struct MainThreadActorTests {
    @Test("main-thread actors run every turn on the thread that calls runMainThreadActors, which returns at shutdown")
    func mainThreadActorsRunOnTheDonatingThread() async throws {
        let system = try makeSystem()
        let seen = SignalingProbe<UInt>()
        let ui = try system.spawn(options: SpawnOptions(name: "ui", placement: .mainThread)) { ClosureActor { (m: CounterMessage, _) in
            seen.record(UInt(pthread_self()))
            if case .get(let replyTo) = m { replyTo.tell(seen.count) }
        } }
        let other = try system.spawn(options: SpawnOptions(name: "ui-2", placement: .mainThread)) { ClosureActor { (_: Int, _) in seen.record(UInt(pthread_self())) } }
        for i in 0..<100 { ui.tell(.add(i)); other.tell(i) }  // queued until a thread is donated
        let donor = Atomic<UInt>(0)
        let returned = Atomic<Bool>(false)
        let returnedSignal = DispatchSemaphore(value: 0)
        let main = Thread {
            donor.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
            system.runMainThreadActors()  // as main() would, instead of dispatchMain()
            returned.store(true, ordering: .sequentiallyConsistent)
            returnedSignal.signal()
        }
        main.start()
        let count = try await ui.ask { .get(replyTo: $0) }
        #expect(count >= 101)
        #expect(seen.waitForCount(201))
        #expect(Set(seen.values) == [donor.load(ordering: .sequentiallyConsistent)])
        let returnedEarly = returned.load(ordering: .sequentiallyConsistent)
        #expect(!returnedEarly)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == 201, "\(report)")
        #expect(returnedSignal.wait(timeout: .now() + 20) == .success)
    }

    @Test("main-thread actors whose thread is never donated have their messages dead-lettered at shutdown, not lost")
    func undonatedMainThreadIsReported() throws {
        let system = try makeSystem()
        let ui = try system.spawn(options: SpawnOptions(placement: .mainThread)) { ClosureActor { (_: Int, _) in } }
        for i in 0..<10 { ui.tell(i) }
        let report = system.shutdown(timeout: .milliseconds(100))
        #expect(report.isBalanced, "\(report)")
        #expect(report.deadLettered == 10 && report.left == 0 && report.delivered == 0, "\(report)")
        #expect(report.workersNotStopped == 1, "the donated worker never ran: \(report)")
    }
}
