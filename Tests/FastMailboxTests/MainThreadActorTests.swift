import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

@Suite("Main-thread actors", .serialized) struct MainThreadActorTests {
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
        #expect(await seen.waitForCount(201))
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
        // The donated worker never stops; the timeout leaves the pool's workers ample time
        // to, on a loaded machine and beside other tests.
        let report = system.shutdown(timeout: .seconds(2))
        #expect(report.isBalanced, "\(report)")
        #expect(report.deadLettered == 10 && report.left == 0 && report.delivered == 0, "\(report)")
        #expect(report.workersNotStopped == 1, "the donated worker never ran: \(report)")
    }
}
