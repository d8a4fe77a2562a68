import Testing
@testable import FastMailbox
import FastMailboxTestSupport

/// `ask` runs in the caller's isolation: it compiles and works from the main actor with a
/// closure that captures main-actor state.
@MainActor
final class MainActorClient {
    var asked: [ActorID] = []
    func total(of counter: ActorRef<CounterMessage>) async throws -> Int {
        try await counter.ask { replyTo in
            asked.append(replyTo.id)
            return .get(replyTo: replyTo)
        }
    }
}

@Suite("Ask isolation") struct AskIsolationTests {
    @Test("ask can be called from main-actor code with a closure that touches main-actor state")
    @MainActor
    func fromMainActor() async throws {
        let system = try makeSystem()
        let counter = try system.spawn { Counter() }
        counter.tell(.add(9))
        let client = MainActorClient()
        #expect(try await client.total(of: counter) == 9)
        #expect(client.asked.count == 1)
        system.shutdown()
    }
}
