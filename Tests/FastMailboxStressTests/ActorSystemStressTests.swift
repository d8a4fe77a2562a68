import Testing
import Foundation
import Synchronization
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport

/// 10,000 actors, random tells from many threads and asks from many tasks, a tenth of the
/// actors stopped mid-stream (half immediately, half after draining), then shutdown.
/// The books must balance exactly:
///   tells + ask requests + replies sent  ==  delivered + replies received + dead-lettered
/// (replies are delivered to ask promises, which are not actors, so the test counts them).
@Suite("ActorSystem stress", .serialized) struct ActorSystemStressTests {
    enum Message: Sendable {
        case hello(Int)
        case ask(ActorRef<Int>)
    }

    @Test("10,000 actors, random tells and asks, some stopped mid-stream: delivered + dead-lettered = sent",
          .timeLimit(.minutes(3)))
    func accounting() async throws {
        let scale = underThreadSanitizer ? 5 : 1
        let actorCount = 10_000 / scale
        let tellThreads = 8, tellsPerThread = 20_000 / scale
        let askTasks = 4, asksPerTask = 400 / scale
        let system = try makeSystem(workers: 2)
        final class Counters: Sendable {
            let repliesSent = Atomic<Int>(0), tellsSent = Atomic<Int>(0), asksSent = Atomic<Int>(0)
            let repliesReceived = Atomic<Int>(0), askFailures = Atomic<Int>(0)
        }
        let counters = Counters()
        var refs: [ActorRef<Message>] = []
        refs.reserveCapacity(actorCount)
        for _ in 0..<actorCount {
            refs.append(try system.spawn { (message: Message, _) in
                if case .ask(let replyTo) = message {
                    counters.repliesSent.wrappingAdd(1, ordering: .relaxed)
                    replyTo.tell(1)
                }
            })
        }
        let targets = refs

        let askers = Task { [targets, counters] in
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<askTasks {
                    group.addTask {
                        var rng = SystemRandomNumberGenerator()
                        for _ in 0..<asksPerTask {
                            let target = targets[Int.random(in: 0..<targets.count, using: &rng)]
                            counters.asksSent.wrappingAdd(1, ordering: .relaxed)
                            do {
                                let reply: Int = try await target.ask(timeout: .seconds(20)) { .ask($0) }
                                counters.repliesReceived.wrappingAdd(reply, ordering: .relaxed)
                            } catch {
                                counters.askFailures.wrappingAdd(1, ordering: .relaxed)
                            }
                        }
                        _ = task
                    }
                }
            }
        }
        let stopper = Thread {
            usleep(2_000)
            for (i, ref) in targets.enumerated() where i % 10 == 0 {
                ref.stop(i % 20 == 0 ? .immediately : .afterDrainingMailbox)
            }
        }
        stopper.start()
        runOnThreads(tellThreads) { t in
            var rng = SystemRandomNumberGenerator()
            for i in 0..<tellsPerThread {
                targets[Int.random(in: 0..<targets.count, using: &rng)].tell(.hello(t << 32 | i))
            }
            counters.tellsSent.wrappingAdd(tellsPerThread, ordering: .relaxed)
        }
        await askers.value
        let report = system.shutdown(timeout: .seconds(60))
        let sent = counters.tellsSent.load(ordering: .relaxed) + counters.asksSent.load(ordering: .relaxed)
            + counters.repliesSent.load(ordering: .relaxed)
        let accountedFor = report.delivered + counters.repliesReceived.load(ordering: .relaxed) + report.deadLettered
        #expect(report.left == 0)
        #expect(report.actorsNotStopped == 0)
        #expect(accountedFor == sent, "sent \(sent), \(report), replies received \(counters.repliesReceived.load(ordering: .relaxed)), ask failures \(counters.askFailures.load(ordering: .relaxed))")
        #expect(report.deadLettered > 0, "stopped actors must have produced dead letters")
    }
}
