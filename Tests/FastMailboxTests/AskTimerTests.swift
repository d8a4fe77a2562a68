import Testing
@testable import FastMailbox
import FastMailboxTestSupport

@Suite("Ask timer")
struct AskTimerTests {
    /// A weak reference gives its object a side table, and every retain and release of it
    /// then takes the runtime's slow path; each ask retains the timer when it is added and
    /// when it is answered. The Dispatch timer's handler held one (`[weak self]`).
    @Test("a real clock's ask timer has no weak reference (no side table), and is freed with its system")
    func noWeakReferenceAndNoLeak() async throws {
        weak let core = try await askOnce()
        // AskTimer's deinit cancels the Dispatch source, which then releases its handler and,
        // with it, the core (the handler's strong reference was the cycle core → source →
        // handler → core).
        #expect(await eventually { core == nil }, "the ask timer's core outlived its system")
    }

    /// The pending table's key bypasses SipHash; its own hash must still spread the system's
    /// sequential ids over a table's buckets (the low bits a Dictionary masks), or every ask
    /// would probe a long run of collisions.
    @Test("request ids hash to well-spread buckets, and the table finds and forgets each one")
    func requestIDsSpread() {
        let buckets = 4_096
        for seed in [0, 12_345, -1] {
            var used = Set<Int>()
            for id in UInt64(1)...UInt64(buckets) {
                used.insert(AskTimer.RequestID(id)._rawHashValue(seed: seed) & (buckets - 1))
            }
            // Random hashing fills a fraction 1 − 1/e of the buckets, well over half; a constant
            // or a hash of the high bits only would fill a handful.
            #expect(used.count > buckets / 2, "seed \(seed): \(used.count) of \(buckets) buckets used")
        }
        var table: [AskTimer.RequestID: Int] = [:]
        for id in 0..<10_000 { table[AskTimer.RequestID(UInt64(id))] = id }
        #expect((0..<10_000).allSatisfy { table[AskTimer.RequestID(UInt64($0))] == $0 })
        for id in stride(from: 0, to: 10_000, by: 2) { table.removeValue(forKey: AskTimer.RequestID(UInt64(id))) }
        #expect(table.count == 5_000)
        #expect(table[AskTimer.RequestID(3)] == 3 && table[AskTimer.RequestID(4)] == nil)
    }

    /// Asks once on a fresh system, checks its timer's weak counts, shuts it down and drops
    /// every reference to it; returns its timer's core.
    private func askOnce() async throws -> AskTimer.Core {
        let system = try makeSystem(workers: 1)
        let echo = try system.spawn { (replyTo: ActorRef<Int>, _) in replyTo.tell(7) }
        let reply: Int = try await echo.ask { $0 }
        #expect(reply == 7)
        // 1: the object's own weak count, with no side table (2 once a weak reference exists).
        #expect(_getWeakRetainCount(system.askTimer) == 1)
        #expect(_getWeakRetainCount(system.askTimer.core) == 1)
        #expect(system.shutdown().isBalanced)
        return system.askTimer.core
    }
}
