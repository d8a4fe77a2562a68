import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Memory released after the work", .serialized) struct MemoryReleaseTests {
    @Test("an overflow burst's batch is released once the mailbox drained")
    func overflowBatchIsReleased() throws {
        // Deterministic: nothing runs until driven, so the whole burst piles up (overflows)
        // behind message 0 with no gate, and quiescence says when it is drained.
        let deterministic = DeterministicScheduler(seed: 1, throughput: 64)
        let system = makeDeterministicSystem(deterministic)
        let count = Atomic<Int>(0)
        let ref = try system.spawn(options: SpawnOptions(name: "burst", mailboxCapacity: 4)) { (m: Int, _) in
            count.wrappingAdd(1, ordering: .relaxed)
        }
        ref.tell(0)
        for i in 1...100_000 { ref.tell(i) }
        let cell = try #require(ref.identity as? ActorCellBase<Int>)
        #expect(cell.mailbox.overflowSendCount > 0)
        try deterministic.runUntilQuiescent()
        #expect(count.load(ordering: .relaxed) == 100_001 && !cell.mailbox.hasPendingWork)
        // The consumer-side batch is the consumer's; read it after the mailbox went idle.
        #expect(cell.mailbox.overflowChunksHeld == 0)
        #expect(system.shutdown().isBalanced)
    }

    @Test("an answered ask releases its timeout timer and promise at once")
    func answeredAskReleasesItsTimer() async throws {
        final class Weak: @unchecked Sendable { weak var object: AnyObject? }
        let deterministic = DeterministicScheduler(seed: 2)
        let system = makeDeterministicSystem(deterministic)
        let weaks = Lock<[Weak]>([])
        let ref = try system.spawn(options: SpawnOptions(name: "replier")) { (m: SlowMessage, _) in
            if case .get(let replyTo) = m {
                let weak = Weak()
                weak.object = replyTo.identity as AnyObject
                weaks.withLock { $0.append(weak) }
                replyTo.tell(1)
            }
        }
        try await runDriven(deterministic) {
            for _ in 0..<100 {
                _ = try await ref.ask(timeout: .seconds(3600)) { SlowMessage.get(replyTo: $0) }
            }
        }
        #expect(weaks.withLock { $0.count } == 100)
        #expect(weaks.withLock { $0.allSatisfy { $0.object == nil } }, "answered asks are still retained (by their timers)")
        #expect(system.outstandingAsks.load(ordering: .relaxed) == 0)
        #expect(system.shutdown().isBalanced)
    }
}
