import Testing
@testable import FastMailbox

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
        #expect(eventually { core == nil }, "the ask timer's core outlived its system")
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
