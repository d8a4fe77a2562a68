import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

@Suite("Dedicated-thread actors", .serialized) struct DedicatedActorTests {
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
        #expect(await pool.waitForCount(1_000))
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
