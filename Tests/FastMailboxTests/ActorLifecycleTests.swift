// The actor lifecycle's transition table (ActorLifecycle.swift): the table as code, as
// documented in the file comment, and as written out here again must agree; real cells
// (on a DeterministicScheduler, so the phase is read on the thread that runs the turns)
// go along each legal path.

import Foundation
import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import TestSupport
import FastMailboxTestKit

private typealias Lifecycle = ActorLifecycle

/// One table entry in the file comment's notation: "illegal", "ignored", or
/// "<next> <effect> <reason>" (effect fin / fin⁰ / drain / record / restart / start;
/// reason e, s, p, k, k/e, or none).
private func notation(_ transition: Lifecycle.Transition?, from phase: Lifecycle.Phase) -> String {
    guard let transition else { return "illegal" }
    if transition.effect == .ignored {
        return transition.next == phase && transition.reason == .unchanged ? "ignored" : "ignored?\(transition)"
    }
    let effect: String
    switch transition.effect {
    case .ignored: effect = "ignored"
    case .start: effect = "start"
    case .drain: effect = "drain"
    case .record: effect = "record"
    case .restart: effect = "restart"
    case .finalize(let postStop): effect = postStop ? "fin" : "fin⁰"
    }
    let reason: String
    switch transition.reason {
    case .unchanged, .intoPending: reason = ""
    case .event: reason = "e"
    case .systemShutDown: reason = "s"
    case .pending: reason = "p"
    case .kept: reason = "k"
    case .keptUnlessFailure: reason = "k/e"
    }
    return [String(describing: transition.next), effect, reason].filter { !$0.isEmpty }.joined(separator: " ")
}

/// The table, written out independently of ActorLifecycle.transition (columns: created,
/// running, draining, stopped). Change the table, its comment and this together.
private let documented: [(Lifecycle.Event, [String])] = [
    (.start, ["running start", "illegal", "illegal", "illegal"]),
    (.stopAfterDrain, ["stopped fin⁰ e", "draining drain e", "ignored", "ignored"]),
    (.stopImmediately, ["stopped fin⁰ e", "stopped fin e", "stopped fin e", "ignored"]),
    (.stopFromInside, ["illegal", "running record", "draining record", "ignored"]),
    (.pendingStopDue, ["illegal", "stopped fin p", "stopped fin p", "illegal"]),
    (.restart, ["illegal", "running restart", "draining restart", "illegal"]),
    (.mailboxDrained, ["illegal", "illegal", "stopped fin k", "illegal"]),
    (.ended, ["illegal", "stopped fin e", "stopped fin k/e", "ignored"]),
    (.shutdown, ["stopped fin⁰ s", "stopped fin s", "stopped fin s", "ignored"]),
]

/// An event actor that records its phase at preStart, each message and postStop, throws on
/// negative messages, and calls `context.stop()` on 0.
private final class PhaseRecorder: EventActor {
    enum Seen: Sendable, Equatable { case preStart(AnyActorCell.Phase), message(Int, AnyActorCell.Phase), postStop }
    struct Boom: Error {}
    let seen: Probe<Seen>
    init(_ seen: Probe<Seen>) { self.seen = seen }

    func preStart(context: ActorContext<Int>) throws { seen.record(.preStart(context.cell.phase)) }
    func receive(_ message: Int, context: ActorContext<Int>) throws {
        seen.record(.message(message, context.cell.phase))
        if message == 0 { context.stop() }
        if message < 0 { throw Boom() }
    }
    func postStop(context: ActorContext<Int>) { seen.record(.postStop) }
}

/// The cell behind `ref` (an event actor's).
private func cell(of ref: ActorRef<Int>) throws -> ActorCellBase<Int> {
    try #require(ref.identity as? ActorCellBase<Int>)
}

@Suite("ActorLifecycle") struct ActorLifecycleTests {
    // MARK: the table

    @Test("every (state, event) pair is what the test's own copy of the table says")
    func tableMatchesDocumented() {
        #expect(documented.map(\.0) == Lifecycle.Event.allCases)
        for (event, row) in documented {
            #expect(row.count == Lifecycle.Phase.allCases.count)
            for (phase, expected) in zip(Lifecycle.Phase.allCases, row) {
                let actual = notation(Lifecycle.transition(phase, event), from: phase)
                #expect(actual == expected, "\(event) in \(phase): table says \(actual), documented \(expected)")
            }
        }
    }

    @Test("the file comment's table is the table")
    func fileCommentMatchesTable() throws {
        let source = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/FastMailbox/ActorLifecycle.swift")
        let lines = try String(contentsOf: source, encoding: .utf8).split(separator: "\n").map { Array(String($0)) }
        let headerIndex = try #require(lines.firstIndex { String($0).contains("created") && String($0).contains("stopped")
            && String($0).hasPrefix("//  ") && !String($0).contains("phase") })
        let header = lines[headerIndex]
        // Column starts: where each phase's name begins in the header line.
        let starts = try Lifecycle.Phase.allCases.map { phase -> Int in
            let name = Array(String(describing: phase))
            return try #require((0...(header.count - name.count)).first { Array(header[$0..<$0 + name.count]) == name })
        }
        var seen: [Lifecycle.Event] = []
        for line in lines[(headerIndex + 1)...] {
            let text = String(line)
            guard text.hasPrefix("//   "), let first = text.dropFirst(5).split(separator: " ").first,
                  let event = Lifecycle.Event.allCases.first(where: { "\($0)" == first }) else { break }
            seen.append(event)
            for (index, phase) in Lifecycle.Phase.allCases.enumerated() {
                let end = index + 1 < starts.count ? starts[index + 1] : line.count
                let cellText = String(line[min(starts[index], line.count)..<min(end, line.count)])
                    .split(separator: " ").joined(separator: " ")
                let actual = notation(Lifecycle.transition(phase, event), from: phase)
                #expect(cellText == actual, "\(event) in \(phase): comment says \(cellText), table \(actual)")
            }
        }
        #expect(seen == Lifecycle.Event.allCases)
    }

    @Test("a pair documented illegal is reported illegal and changes nothing")
    func illegalIsReported() {
        #expect(Lifecycle.transition(.stopped, .start) == nil)
        #expect(Lifecycle.transition(.running, .mailboxDrained) == nil)
        #expect(Lifecycle.transition(.created, .stopFromInside) == nil)
        var stopped = Lifecycle(phase: .stopped, reason: .failed, pending: .none)
        #expect(stopped.apply(.start) == nil)
        #expect(stopped.apply(.restart) == nil)
        #expect(stopped == Lifecycle(phase: .stopped, reason: .failed, pending: .none))
        var ignoring = stopped
        #expect(ignoring.apply(.stopImmediately, reason: .systemShutDown)?.effect == .ignored)
        #expect(ignoring == stopped)  // L1: the reason is final once stopped
    }

    #if DEBUG
    @Test("raising an illegal event is an assertion failure naming the phase and the event (debug builds)")
    func illegalEventAsserts() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try startRunningCellAgain()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("illegal lifecycle transition: event start in phase running"), "\(output)")
    }
    #endif

    @Test("reasons: draining's stands unless the drain is cut short; a failure replaces a pending plain stop")
    func reasonRules() {
        var drained = Lifecycle(phase: .draining, reason: .systemShutDown, pending: .none)
        #expect(drained.apply(.mailboxDrained)?.effect == .finalize(postStop: true))
        #expect(drained == Lifecycle(phase: .stopped, reason: .systemShutDown, pending: .none))

        var finished = Lifecycle(phase: .draining, reason: .stopped, pending: .none)
        _ = finished.apply(.ended, reason: .finished)
        #expect(finished.reason == .stopped)  // k: a body that returned while draining
        var failed = Lifecycle(phase: .draining, reason: .stopped, pending: .none)
        #expect(failed.apply(.ended, reason: .failed)?.text == .eventToReason)
        #expect(failed.reason == .failed)     // e: a body that threw

        var running = Lifecycle(phase: .running, reason: .none, pending: .none)
        #expect(running.apply(.stopFromInside, reason: .stopped)?.effect == .record)
        #expect(running.apply(.stopFromInside, reason: .failed)?.text == .eventToPending)
        #expect(running.apply(.stopFromInside, reason: .stopped)?.text == TextMoveNone)
        #expect(running == Lifecycle(phase: .running, reason: .none, pending: .failed))
        #expect(running.apply(.pendingStopDue)?.text == .pendingToReason)
        #expect(running == Lifecycle(phase: .stopped, reason: .failed, pending: .none))  // L6
    }

    // MARK: real cells along each legal path

    @Test("spawn: created until the first turn runs preStart (start); a closure actor is born running")
    func spawnStarts() throws {
        let deterministic = DeterministicScheduler(seed: 11)
        let system = makeDeterministicSystem(deterministic)
        let seen = Probe<PhaseRecorder.Seen>()
        let ref = try system.spawn { PhaseRecorder(seen) }
        #expect(try cell(of: ref).phaseCode == .created)
        try deterministic.runUntilQuiescent()
        #expect(try cell(of: ref).phaseCode == .running)
        #expect(seen.values == [.preStart(.running)])
        let closure = try system.spawn { (_: Int, _) in }
        #expect(try cell(of: closure).phaseCode == .running)  // startWithoutTurn at spawn
        #expect(system.shutdown().isBalanced)
    }

    @Test("stop after drain: running → draining (mailbox closed, queued messages handled) → stopped")
    func stopAfterDrain() throws {
        let deterministic = DeterministicScheduler(seed: 12)
        let system = makeDeterministicSystem(deterministic)
        let seen = Probe<PhaseRecorder.Seen>()
        let ref = try system.spawn { PhaseRecorder(seen) }
        ref.tell(1)
        try deterministic.runUntilQuiescent()
        ref.tell(2)
        ref.tell(3)
        ref.stop(.afterDrainingMailbox)
        ref.tell(4)  // after the close: a dead letter
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [.preStart(.running), .message(1, .running), .message(2, .draining(.stopped)),
                                .message(3, .draining(.stopped)), .postStop])
        let stopped = try cell(of: ref)
        #expect(stopped.phaseCode == .stopped)
        #expect(stopped.termination?.reason == .stopped)
        #expect(stopped.pendingStop == nil)
        #expect(system.deadLetters.count == 1)
        #expect(system.shutdown().isBalanced)
    }

    @Test("stop immediately: running → stopped; queued messages are dead letters; a later stop is ignored")
    func stopImmediately() throws {
        let deterministic = DeterministicScheduler(seed: 13)
        let system = makeDeterministicSystem(deterministic)
        let seen = Probe<PhaseRecorder.Seen>()
        let ref = try system.spawn { PhaseRecorder(seen) }
        try deterministic.runUntilQuiescent()
        for i in 1...3 { ref.tell(i) }
        ref.stop(.immediately)
        try deterministic.runUntilQuiescent()
        ref.stop(.afterDrainingMailbox)  // stopped is final (L1): ignored
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [.preStart(.running), .postStop])  // postStop once (L2, L4)
        #expect(try cell(of: ref).termination?.reason == .stopped)
        #expect(system.deadLetters.count == 3)
        #expect(system.shutdown().isBalanced)
    }

    @Test("context.stop(): the pending stop runs when the message returns")
    func stopFromInside() throws {
        let deterministic = DeterministicScheduler(seed: 14)
        let system = makeDeterministicSystem(deterministic)
        let seen = Probe<PhaseRecorder.Seen>()
        let ref = try system.spawn { PhaseRecorder(seen) }
        ref.tell(0)
        ref.tell(5)
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [.preStart(.running), .message(0, .running), .postStop])
        #expect(try cell(of: ref).termination?.reason == .stopped)
        #expect(system.shutdown().isBalanced)
    }

    @Test("failure: restart keeps the phase and starts a fresh instance; stop ends it with .failed")
    func failure() throws {
        let deterministic = DeterministicScheduler(seed: 15)
        let system = makeDeterministicSystem(deterministic, supervisor: .restart(maxRestarts: 5, within: .seconds(60)))
        let seen = Probe<PhaseRecorder.Seen>()
        let restarted = try system.spawn { PhaseRecorder(seen) }
        restarted.tell(-1)
        restarted.tell(2)
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [.preStart(.running), .message(-1, .running), .postStop, .preStart(.running),
                                .message(2, .running)])
        #expect(try cell(of: restarted).phaseCode == .running)

        let stopSeen = Probe<PhaseRecorder.Seen>()
        let stopped = try system.spawn(options: SpawnOptions(supervisor: .stop)) { PhaseRecorder(stopSeen) }
        stopped.tell(-1)
        stopped.tell(2)
        try deterministic.runUntilQuiescent()
        #expect(stopSeen.values == [.preStart(.running), .message(-1, .running), .postStop])
        #expect(try cell(of: stopped).termination?.reason == .failed(String(describing: PhaseRecorder.Boom())))
        #expect(system.shutdown().isBalanced)
    }

    @Test("a failure while draining cuts the drain short: its reason is the one announced")
    func failureWhileDraining() throws {
        let deterministic = DeterministicScheduler(seed: 16)
        let system = makeDeterministicSystem(deterministic, supervisor: .stop)
        let seen = Probe<PhaseRecorder.Seen>()
        let ref = try system.spawn { PhaseRecorder(seen) }
        try deterministic.runUntilQuiescent()
        ref.tell(-1)
        ref.tell(2)
        ref.stop(.afterDrainingMailbox)
        try deterministic.runUntilQuiescent()
        #expect(seen.values == [.preStart(.running), .message(-1, .draining(.stopped)), .postStop])
        #expect(try cell(of: ref).termination?.reason == .failed(String(describing: PhaseRecorder.Boom())))
        #expect(system.deadLetters.count == 1)
        #expect(system.shutdown().isBalanced)
    }

    @Test("shutdown: started and never-started actors end stopped with .systemShutDown")
    func shutdown() throws {
        let deterministic = DeterministicScheduler(seed: 17)
        let system = makeDeterministicSystem(deterministic)
        let seen = Probe<PhaseRecorder.Seen>()
        let started = try system.spawn { PhaseRecorder(seen) }
        try deterministic.runUntilQuiescent()
        let unstarted = try system.spawn { PhaseRecorder(Probe()) }
        #expect(try cell(of: unstarted).phaseCode == .created)
        #expect(system.shutdown().isBalanced)
        for ref in [started, unstarted] {
            let cell = try cell(of: ref)
            #expect(cell.phaseCode == .stopped)
            #expect(cell.termination?.reason == .systemShutDown)
        }
        #expect(seen.values == [.preStart(.running), .postStop])
    }

    @Test("a pool's router: running from init, stopped (ended) when its last routee has")
    func router() throws {
        let deterministic = DeterministicScheduler(seed: 18)
        let system = makeDeterministicSystem(deterministic)
        let pool = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 2))) { PhaseRecorder(Probe()) }
        let router = try #require(pool.identity as? Router<Int>)
        #expect(router.phaseCode == .running)
        try deterministic.runUntilQuiescent()
        pool.stop(.immediately)
        try deterministic.runUntilQuiescent()
        #expect(router.termination?.reason == .stopped)
        #expect(system.shutdown().isBalanced)
    }

    @Test("an ignored event writes nothing: a stopped cell's phase read on another thread races with no turn (TSan)")
    func ignoredEventWritesNothing() throws {
        let deterministic = DeterministicScheduler(seed: 20)
        let system = makeDeterministicSystem(deterministic)
        let ref = try system.spawn { (_: Int, _) in }
        ref.stop(.immediately)
        try deterministic.runUntilQuiescent()
        let cell = try cell(of: ref)
        #expect(cell.phaseCode == .stopped)
        // One thread raises the events a stopped cell ignores (as a later turn may, after its
        // observers fired), the other reads the phase, with nothing ordering the two: under
        // ThreadSanitizer a same-value store would be reported as a race (it was, for a
        // sequential body's `ended`: "a sequential actor whose body returns" below).
        let effects = Probe<String>()
        runOnThreads(2) { index in
            if index == 0 {
                for event in [ActorLifecycle.Event.ended, .shutdown, .stopImmediately, .stopAfterDrain, .stopFromInside] {
                    effects.record("\(cell.advance(event, .stopped))")
                }
            } else {
                for _ in 0..<100 where cell.phaseCode != .stopped { effects.record("phase changed") }
            }
        }
        #expect(effects.values == Array(repeating: "ignored", count: 5))
        #expect(cell.phaseCode == .stopped && cell.termination?.reason == .stopped)
        _ = system.shutdown()
    }

    @Test("a sequential actor whose body returns: running → stopped (ended, .finished)")
    func sequentialEnds() async throws {
        let system = try makeSystem()
        let ref: ActorRef<Int> = try system.spawn { _ in }
        let terminated = await ref.terminated
        #expect(terminated.reason == .finished)
        let cell = try #require(ref.identity as? SequentialActorCell<Int>)
        #expect(cell.phaseCode == .stopped)  // after `terminated`: the stop happened-before it
        #expect(system.shutdown().isBalanced)
    }
}

/// Raises `start` on a running cell (an exit test's body: it must fail an assertion).
private func startRunningCellAgain() throws {
    let deterministic = DeterministicScheduler(seed: 19)
    let system = makeDeterministicSystem(deterministic)
    let ref = try system.spawn { (_: Int, _) in }
    let cell = try #require(ref.identity as? ActorCellBase<Int>)
    cell.advance(.start)
}

private let TextMoveNone = Lifecycle.TextMove.none
