import Foundation
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport

@Suite("Pools as actors", .serialized) struct PoolLifecycleTests {
    @Test("a pool is registered under its name, watchable, and frees its name when it terminates")
    func poolIsFirstClass() async throws {
        let system = try makeSystem()
        let pool = try system.spawn(options: SpawnOptions(name: "pool", pool: SpawnOptions.Pool(size: 3))) { (_: Int, _) in }
        #expect(system.lookup("pool", as: Int.self) == pool)
        #expect(system.lookup("pool", as: String.self) == nil)
        #expect(throws: ActorSystemError.duplicateName("pool")) { try system.spawn(options: SpawnOptions(name: "pool")) { (_: Int, _) in } }
        #expect(system.metrics.liveActors == 3)  // the routees; the pool ref is not an actor of its own

        let probe = SignalingProbe<Terminated>()
        let watching = DispatchSemaphore(value: 0)
        _ = try system.spawn(options: SpawnOptions(name: "signals")) { SignalRecorder(probe: probe, target: pool, watching: watching) }
        #expect(watching.wait(timeout: .now() + 20) == .success)
        #expect(system.metrics.liveActors == 4)
        pool.stop()
        let termination = await pool.terminated
        #expect(termination == Terminated(id: pool.id, name: "pool", reason: .stopped))
        #expect(await probe.waitForCount(1))
        #expect(probe.values == [termination])
        #expect(system.lookup("pool", as: Int.self) == nil)
        let again = try system.spawn(options: SpawnOptions(name: "pool", pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in }
        #expect(system.lookup("pool", as: Int.self) == again)
        #expect(await system.gracefulShutdown().isBalanced)
        #expect(await again.terminated.reason == .systemShutDown)
    }

    @Test("a pool whose routees all fail terminates with the last failure")
    func poolEndsWithRouteeFailure() async throws {
        let system = try makeSystem()
        let pool = try system.spawn(options: SpawnOptions(name: "fragile", supervisor: .stop, pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in throw Boom() }
        pool.tell(1)
        pool.tell(2)
        #expect(await pool.terminated.reason == .failed("boom"))
        await system.gracefulShutdown()
    }
}

/// Watches `target` from preStart and records the `.terminated` signal.
private final class SignalRecorder: EventActor {
    let probe: SignalingProbe<Terminated>
    let target: ActorRef<Int>
    let watching: DispatchSemaphore
    init(probe: SignalingProbe<Terminated>, target: ActorRef<Int>, watching: DispatchSemaphore) {
        self.probe = probe
        self.target = target
        self.watching = watching
    }
    func preStart(context: ActorContext<Int>) throws {
        context.watch(target)
        watching.signal()
    }
    func receive(_ message: Int, context: ActorContext<Int>) {}
    func receiveSignal(_ signal: Signal, context: ActorContext<Int>) {
        if case .terminated(let t) = signal { probe.record(t) }
    }
}
