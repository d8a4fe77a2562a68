// ActorRef: one word for every kind of recipient, sends that allocate nothing, and the
// identity rules (equal refs ⇔ equal ids) across kinds.

import MallocCounter
import MNScheduler
import Synchronization
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

/// Ping-pong as a user writes it: an enum whose payload carries a reply-to ref.
enum Volley: Sendable { case ball(Int, replyTo: ActorRef<Volley>), stop }

/// Answers each ball with the next one until `last`, counting what it got.
final class VolleyPlayer: EventActor {
    final class Tally: Sendable { let count = Atomic<Int>(0) }
    let last: Int
    let received: Tally
    init(last: Int, received: Tally) { self.last = last; self.received = received }
    func receive(_ message: Volley, context: ActorContext<Volley>) {
        guard case .ball(let k, let replyTo) = message else { return }
        received.count.wrappingAdd(1, ordering: .relaxed)
        if k < last { replyTo.tell(.ball(k + 1, replyTo: context.myself)) }
    }
}

@Suite("ActorRef") struct ActorRefTests {
    @Test("a ref is one word, whatever it points at; a message carrying one is a word bigger than its other payload")
    func oneWord() throws {
        #expect(MemoryLayout<ActorRef<Int>>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<ActorRef<Volley>>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<ActorRef<[String: Int]>>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<Volley>.size <= 17, "Int + one-word ref (+ tag)")
        #expect(MemoryLayout<ActorRef<Int>?>.size == MemoryLayout<UInt>.size, "nil fits in the spare bits too")
    }

    @Test("refs of every kind keep their identity and reach their recipient: cell, sequential, pool, ask reply slot")
    func everyKind() async throws {
        let system = try makeSystem()
        let got = Atomic<Int>(0)
        let cell = try system.spawn { (n: Int, _) in got.wrappingAdd(n, ordering: .relaxed) }
        let sequential: ActorRef<Int> = try system.spawn { inbox in
            for await n in inbox { got.wrappingAdd(n, ordering: .relaxed) }
        }
        let pool = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 2))) { (n: Int, _) in got.wrappingAdd(n, ordering: .relaxed) }
        let echo = try system.spawn { (replyTo: ActorRef<Int>, _) in replyTo.tell(1000) }

        let refs = [cell, sequential, pool]
        #expect(Set(refs.map(\.id)).count == 3)
        #expect(Set(refs).count == 3 && refs.allSatisfy { $0 == $0 })
        #expect(system.lookup(pool.name, as: Int.self) == nil || system.lookup(pool.name, as: Int.self) == pool)
        #expect(system.routees(of: pool)?.count == 2)
        cell.tell(1)
        sequential.tell(10)
        pool.tell(100)
        let reply = try await echo.ask(timeout: .seconds(10)) { $0 }  // through an ask's reply slot
        #expect(reply == 1000)
        let deadline = ContinuousClock.now + .seconds(10)
        while got.load(ordering: .relaxed) != 111, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(got.load(ordering: .relaxed) == 111)
        _ = system.shutdown()
    }

    @Test("an ask through an ask's reply slot (a ref that is not an actor) delivers its request and times out, never traps")
    func askThroughReplySlot() async throws {
        let system = try makeSystem()
        let innerOutcome = Probe<String>()
        // The actor asks the reply-to ref it got: the inner ask's request (5) answers the
        // outer ask, and nobody answers the inner one. The inner ask's task runs on the
        // system's own workers: parallel tests can keep Swift's small default pool busy
        // past the outer ask's timeout.
        let relay = try system.spawn { (replyTo: ActorRef<Int>, context: ActorContext<ActorRef<Int>>) in
            Task(executorPreference: context.system.scheduler.taskExecutor) {
                do {
                    let reply: Int = try await replyTo.ask(timeout: .milliseconds(200)) { (_: ActorRef<Int>) in 5 }
                    innerOutcome.record("reply \(reply)")
                } catch AskError.timedOut {
                    innerOutcome.record("timedOut")
                } catch {
                    innerOutcome.record("\(error)")
                }
            }
        }
        let reply = try await relay.ask(timeout: .seconds(10)) { (replyTo: ActorRef<Int>) in replyTo }
        #expect(reply == 5)
        let deadline = ContinuousClock.now + .seconds(10)
        while innerOutcome.count == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(innerOutcome.values == ["timedOut"])
        _ = system.shutdown()
    }

    @Test("ping-pong with reply-to refs in the messages allocates nothing per message once warm (tell, receive, context.myself)")
    func pingPongAllocatesNothing() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        let deterministic = DeterministicScheduler(seed: 9)
        let system = makeDeterministicSystem(deterministic)
        let received = VolleyPlayer.Tally()
        let rounds = 2_000
        let a = try system.spawn { VolleyPlayer(last: rounds, received: received) }
        let b = try system.spawn { VolleyPlayer(last: rounds, received: received) }
        a.tell(Volley.ball(0, replyTo: b))
        // Warm up: first turns, rings allocated.
        for _ in 0..<200 { _ = try deterministic.step() }
        let warm = received.count.load(ordering: .relaxed)
        let start = malloc_counter_thread_allocations()  // every turn runs on this thread
        for _ in 0..<1_000 { _ = try deterministic.step() }
        let allocations = malloc_counter_thread_allocations() - start
        let messages = received.count.load(ordering: .relaxed) - warm
        #expect(messages >= 500, "the steps delivered messages (\(messages))")
        #expect(allocations == 0, "\(allocations) allocations for \(messages) messages")
        _ = try deterministic.runUntilQuiescent()
        #expect(received.count.load(ordering: .relaxed) == rounds + 1)
    }

    @Test("an ask allocates one object, its promise (no checked continuation's canary)")
    func askAllocatesItsPromiseOnly() async throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        let deterministic = DeterministicScheduler(seed: 21)
        let system = makeDeterministicSystem(deterministic)
        let echo = try system.spawn { (replyTo: ActorRef<Int>, _) in replyTo.tell(7) }
        try deterministic.runUntilQuiescent()
        let asks = 1_000
        // The asker's task and the echo's turns all run on this thread (the deterministic
        // scheduler's steps), so the thread's count is the whole path's.
        let counted = Task(executorPreference: deterministic.taskExecutor) { () async throws -> UInt64 in
            let _: Int = try await echo.ask { $0 }  // warm: the ring, the timer's table, the task's allocator
            let before = malloc_counter_thread_allocations()
            for _ in 0..<asks { let _: Int = try await echo.ask { $0 } }
            return malloc_counter_thread_allocations() - before
        }
        try deterministic.runUntilQuiescent()
        let allocations = try await counted.value
        #expect(allocations >= UInt64(asks), "each ask's promise is an object (\(allocations) for \(asks) asks)")
        // Beyond the promises: the timer's table growing now and then (answered asks leave it
        // lazily), a handful in a thousand. A checked continuation made it 2 per ask.
        #expect(allocations <= UInt64(asks + asks / 20), "one allocation per ask: \(allocations) for \(asks) asks")
        system.shutdown()
    }
}
