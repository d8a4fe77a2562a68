import Testing
import Dispatch
import Glibc
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

// An ask answered on another thread before its asker reaches the await (the reply can
// overtake the asker: the request is sent inside withUnsafeThrowingContinuation's body).
// The Swift runtime then takes its fast path (swift_continuation_await finds the
// continuation resumed and goes on) without the ThreadSanitizer acquire it makes when a
// suspended task is resumed, so, to TSan, the replier's reads of the continuation's
// context would race with the asker's next use of that task-allocator memory; `finishAsk`
// acquires the task (threadSanitizerAcquireCurrentTask) to order them. Here each reply is
// made on another thread while the request's send waits, so (all but certainly) every ask
// takes that path: under TSan (scripts/test.sh) the run must report no race; in every
// build the replies must arrive, in order.

enum EarlyQuestion: Sendable { case square(Int, replyTo: ActorRef<Int>) }

/// A recipient that answers each request on another thread and lets `deliver` return only
/// once the reply has been accepted (the ask has left its system's timer, which the reply
/// does just before it resumes the continuation), and 1 ms later: the reply resumes the ask
/// before its asker awaits. No synchronisation TSan sees orders the resume itself before the
/// asker's next step (a semaphore from the replier would): only the runtime's does.
private final class AnswerFirst: ForeignRecipient, Sendable {
    typealias Message = EarlyQuestion
    let id: ActorID
    let system: ActorSystem
    var name: String { "answer-first" }
    init(system: ActorSystem) {
        id = system.nextForeignActorID()
        self.system = system
    }

    func deliver(_ message: EarlyQuestion) -> Bool {
        guard case .square(let n, let replyTo) = message else { return false }
        DispatchQueue.global().async { replyTo.tell(n * n) }
        while system.askTimer.pendingCount > 0 { usleep(50) }
        usleep(1_000)
        return true
    }

    func stop(_ mode: StopMode) {}
    func requestDeadLettered() {}
}

@Suite("Ask resumed before its asker awaits") struct AskEarlyResumeTests {
    @Test("asks answered on another thread before the asker awaits all return their replies, in order (TSan: no race)")
    func answeredBeforeAwait() async throws {
        let system = try makeSystem(workers: 1)
        defer { system.shutdown() }
        let ref = ActorRef<EarlyQuestion>(foreign: AnswerFirst(system: system), system: system,
                                          watchProxy: ActorRef<Never>?.none)
        for n in 0..<200 {
            let reply = try await ref.ask(timeout: .seconds(30)) { .square(n, replyTo: $0) }
            #expect(reply == n * n)
        }
        #expect(system.askTimer.pendingCount == 0)
    }
}
