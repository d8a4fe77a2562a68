import FastMailbox
import FastMailboxTestKit
import Heartbeat
import Testing

@Test func tickerCountsEverySecondAndStartsAgainAfterAFailure() throws {
    let scheduler = DeterministicScheduler(seed: 1)
    let system = ActorSystem(scheduler: scheduler)
    let probe = try TestProbe<Int>(in: system)
    let ticker = try spawnTicker(in: system, listener: probe.ref)

    try probe.expectMessage(1, within: .seconds(2))    // at 1 s of virtual time
    try probe.expectMessage(2, within: .seconds(2))    // at 2 s

    ticker.tell(.fail)                                 // restarted 500 ms later
    try probe.expectNoMessage(within: .milliseconds(1_400))
    try probe.expectMessage(1, within: .seconds(1))    // a fresh count, at 3.5 s
    _ = system.shutdown()
}
