import Testing
import Foundation
import Synchronization
@testable import FastMailbox
@testable import MNScheduler
import FastMailboxTestSupport

@Suite("Durations at the extremes", .serialized) struct ExtremeDurationTests {
    @Test("saturating conversion clamps huge and negative durations instead of trapping or wrapping")
    func saturatingConversion() {
        #expect(Duration.seconds(Int64.max).saturatingNanoseconds == UInt64.max)
        #expect(Duration.seconds(1e11).saturatingNanoseconds == UInt64.max)  // 1e20 ns > UInt64.max
        #expect(Duration.seconds(1e9).saturatingNanoseconds == 1_000_000_000_000_000_000)
        #expect(Duration.seconds(-5).saturatingNanoseconds == 0)
        #expect(Duration.milliseconds(1500).saturatingNanoseconds == 1_500_000_000)
        #expect(Duration.seconds(Int64.max).saturatingDeadline(from: 10) == UInt64.max)
        #expect(Duration.seconds(1).saturatingDeadline(from: UInt64.max - 5) == UInt64.max)
    }

    @Test("ask, shutdown and supervisor windows accept Duration.seconds(Int64.max)")
    func hugeTimeoutsWork() async throws {
        let system = try makeSystem()
        let counter = try system.spawn(options: SpawnOptions(supervisor: .restart(maxRestarts: 3, within: .seconds(1e11)))) { Counter() }
        counter.tell(.add(2))
        counter.tell(.fail)  // restart: the window conversion ran on a worker without trapping
        counter.tell(.add(3))
        let total = try await counter.ask(timeout: .seconds(Int64.max)) { .get(replyTo: $0) }
        #expect(total == 3)
        let report = system.shutdown(timeout: .seconds(Int64.max))
        #expect(report.isBalanced, "\(report)")
    }

    @Test("Inbox.receive with a huge timeout waits for the message instead of timing out at once")
    func hugeReceiveTimeoutWaits() async throws {
        let system = try makeSystem()
        let got = SignalingProbe<String>()
        let ref: ActorRef<Int> = try system.spawn(options: SpawnOptions(name: "patient")) { inbox in
            do {
                let m = try await inbox.receive(timeout: .seconds(Int64.max))
                got.record("got \(m)")
            } catch {
                got.record("error \(error)")
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        ref.tell(7)
        #expect(await got.waitForCount(1))
        #expect(got.values == ["got 7"])
        #expect(system.shutdown().isBalanced)
    }
}
