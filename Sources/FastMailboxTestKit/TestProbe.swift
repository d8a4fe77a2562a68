// TestProbe — an actor that records what it receives, and expectations that drive a
// DeterministicScheduler until they are met or virtual time runs out (Akka's TestProbe).
//
// Waiting is driving: an expectation runs turns until nothing is runnable, looks at what
// the probe recorded, and when nothing matched moves virtual time to the next pending
// timer (never past its deadline) and runs the turns that timer made runnable. So a
// message that a timer causes (an ask timeout, a timer of the actor under test) arrives
// at the virtual time it would on a real clock, and a failure is reported at once, with
// no wall-clock wait. The probe is two actors on the system: the recipient (`ref`) and a
// watcher that watches on the probe's behalf, since watching happens in a turn.

import FastMailbox
import MNScheduler
import Synchronization

/// An actor reference for tests that records every message it receives, with
/// expectations on them measured in virtual time.
///
/// Create one on an `ActorSystem` that runs on a ``DeterministicScheduler``, hand
/// ``ref`` to the actor under test, then expect:
///
/// ```swift
/// let scheduler = DeterministicScheduler(seed: 7)
/// let system = ActorSystem(scheduler: scheduler)
/// let probe = try TestProbe<String>(in: system)
/// let greeter = try system.spawn(of: String.self) { name, _ in
///     probe.ref.tell("hello, \(name)")
/// }
/// greeter.tell("Ada")
/// try probe.expectMessage("hello, Ada")
/// try probe.expectNoMessage(within: .seconds(1))
/// ```
///
/// Guarantees:
/// - Messages are kept in the order the probe received them; each expectation takes the
///   ones it examines from the front.
/// - `within` is virtual time: an expectation runs turns and advances the scheduler's clock
///   timer by timer up to `within` after the call, never further, and returns as soon as it
///   is met. A failed expectation throws ``TestProbeError`` at once (no real waiting).
/// - Thread-safety: the expectations drive the scheduler, so call them from the test's
///   thread, outside the scheduler's turns (a call from inside a turn throws
///   ``TestProbeError/scheduler(_:)`` with ``DeterministicSchedulerError/alreadyDriving(seed:)``).
///   ``ref`` may be used from anywhere.
public final class TestProbe<Message: Sendable>: Sendable {
    /// The probe's actor: send it messages, or hand it to the actor under test.
    public let ref: ActorRef<Message>
    /// The deterministic scheduler of the probe's system, driven by the expectations.
    public let scheduler: DeterministicScheduler

    private let recording: Recording<Message>
    private let watcher: ActorRef<WatchRequest<Message>>

    /// Creates a probe: two actors on `system`, the recipient and its watcher.
    /// - Parameters:
    ///   - name: the recipient's name (its watcher's is the name followed by `-watcher`);
    ///     nil, the default, lets the system name both, so any number of probes can share a
    ///     system.
    ///   - system: an actor system that runs on a ``DeterministicScheduler``.
    /// - Throws: ``TestProbeError/notDeterministic(system:)`` when `system` does not run on a
    ///   ``DeterministicScheduler``; ``TestProbeError/spawnFailed(_:)`` when a spawn fails
    ///   (the name is taken, the system is shut down).
    public init(_ name: String? = nil, in system: ActorSystem) throws(TestProbeError) {
        guard let scheduler = DeterministicScheduler(driving: system.scheduler) else {
            throw .notDeterministic(system: system.name)
        }
        let recording = Recording<Message>()
        self.scheduler = scheduler
        self.recording = recording
        do {
            ref = try system.spawn(options: SpawnOptions(name: name)) { RecordingActor<Message>(recording: recording) }
            watcher = try system.spawn(options: SpawnOptions(name: name.map { "\($0)-watcher" })) {
                Watcher<Message>(recording: recording)
            }
        } catch {
            throw .spawnFailed(error)
        }
    }

    // MARK: expectations

    /// Waits (in virtual time) for the next message and returns it.
    /// - Throws: ``TestProbeError/timedOut(expected:within:)`` when none arrived in time.
    @discardableResult
    public func expectMessage(within timeout: Duration = .seconds(3)) throws(TestProbeError) -> Message {
        try awaitMessage(within: timeout, expected: "a \(Message.self)")
    }

    /// Waits (in virtual time) for the next message and checks that it equals `expected`.
    /// - Returns: the message.
    /// - Throws: ``TestProbeError/timedOut(expected:within:)`` when none arrived in time,
    ///   ``TestProbeError/unexpectedMessage(_:expected:)`` when the next one differs (it is
    ///   taken all the same).
    @discardableResult
    public func expectMessage(_ expected: Message, within timeout: Duration = .seconds(3)) throws(TestProbeError)
        -> Message where Message: Equatable
    {
        let message = try awaitMessage(within: timeout, expected: String(describing: expected))
        guard message == expected else {
            throw .unexpectedMessage(String(describing: message), expected: String(describing: expected))
        }
        return message
    }

    /// Checks that no message arrives within `duration` of virtual time: runs every turn
    /// and every timer due in that time.
    /// - Throws: ``TestProbeError/unexpectedMessage(_:expected:)`` naming the first message
    ///   that arrived (it is taken).
    public func expectNoMessage(within duration: Duration = .seconds(3)) throws(TestProbeError) {
        _ = try drive(until: scheduler.now + duration) { self.recording.hasMessage }
        if let message = recording.takeMessage() {
            throw .unexpectedMessage(String(describing: message), expected: "no message within \(duration)")
        }
    }

    /// Takes messages until `decide` completes on one, skipping those it continues on, all
    /// within `timeout` of virtual time (Akka's `fishForMessage`).
    /// - Parameters:
    ///   - timeout: virtual time for the whole fishing, from the call.
    ///   - decide: returns ``FishingOutcome/complete`` for the message sought,
    ///     ``FishingOutcome/continue`` to drop it and keep fishing, or
    ///     ``FishingOutcome/fail(_:)`` to stop with an error.
    /// - Returns: the message `decide` completed on.
    /// - Throws: ``TestProbeError/timedOut(expected:within:)`` when time ran out first,
    ///   ``TestProbeError/fishingFailed(_:)`` when `decide` failed.
    @discardableResult
    public func fishForMessage(within timeout: Duration = .seconds(3),
                               _ decide: (Message) -> FishingOutcome) throws(TestProbeError) -> Message {
        let deadline = scheduler.now + timeout
        while true {
            let remaining = deadline - scheduler.now
            let message = try awaitMessage(within: remaining > .zero ? remaining : .zero,
                                           expected: "a \(Message.self) that completes the fishing", reportedWithin: timeout)
            switch decide(message) {
            case .complete: return message
            case .continue: continue
            case .fail(let reason): throw .fishingFailed("\(message): \(reason)")
            }
        }
    }

    /// Watches `actor` (if the probe does not already) and waits, in virtual time, until it
    /// has stopped. An actor that stopped before the call is reported at once.
    /// - Returns: what its stop delivered to watchers.
    /// - Throws: ``TestProbeError/timedOut(expected:within:)`` when it is still running
    ///   after `timeout`.
    @discardableResult
    public func expectTerminated<M>(_ actor: ActorRef<M>, within timeout: Duration = .seconds(3))
        throws(TestProbeError) -> Terminated
    {
        let id = actor.id
        if recording.startWatching(id) {
            watcher.tell(WatchRequest { context in context.watch(actor) })
        }
        let deadline = scheduler.now + timeout
        _ = try drive(until: deadline) { self.recording.hasTermination(of: id) }
        guard let terminated = recording.takeTermination(of: id) else {
            throw .timedOut(expected: "\(actor) to stop", within: timeout)
        }
        return terminated
    }

    /// Messages received and not yet taken by an expectation (a snapshot; drives nothing).
    public var receivedCount: Int { recording.messageCount }

    // MARK: driving

    private func awaitMessage(within timeout: Duration, expected: String,
                              reportedWithin: Duration? = nil) throws(TestProbeError) -> Message {
        _ = try drive(until: scheduler.now + timeout) { self.recording.hasMessage }
        guard let message = recording.takeMessage() else {
            throw .timedOut(expected: expected, within: reportedWithin ?? timeout)
        }
        return message
    }

    /// Runs turns, then moves virtual time to the next timer not after `deadline`, until
    /// `done` holds or `deadline` is reached with nothing left to run. Returns whether
    /// `done` held.
    private func drive(until deadline: Duration, _ done: () -> Bool) throws(TestProbeError) -> Bool {
        do {
            while true {
                try scheduler.runUntilQuiescent()
                if done() { return true }
                let now = scheduler.now
                guard now < deadline else { return false }
                let next = scheduler.nextTimerDeadline.map { min($0, deadline) } ?? deadline
                try scheduler.advanceTime(by: max(next - now, .zero))
            }
        } catch {
            throw .scheduler(error)
        }
    }
}

/// What ``TestProbe/fishForMessage(within:_:)``'s closure decides about one message.
public enum FishingOutcome: Sendable, Equatable {
    /// This is the message sought: fishing ends and returns it.
    case complete
    /// Not this one: drop it and keep fishing.
    case `continue`
    /// Stop fishing with ``TestProbeError/fishingFailed(_:)``, giving the reason.
    case fail(String)
}

// MARK: - the probe's actors

/// What the probe received: its messages, and the stops of the actors it watches.
private final class Recording<Message: Sendable>: Sendable {
    private struct State {
        var messages: [Message] = []
        var watched: Set<ActorID> = []
        var terminations: [ActorID: Terminated] = [:]
    }

    private let state = Mutex(State())

    func record(_ message: Message) { state.withLock { $0.messages.append(message) } }
    func record(_ terminated: Terminated) { state.withLock { $0.terminations[terminated.id] = terminated } }

    var hasMessage: Bool { state.withLock { !$0.messages.isEmpty } }
    var messageCount: Int { state.withLock { $0.messages.count } }

    func takeMessage() -> Message? {
        state.withLock { state in state.messages.isEmpty ? nil : state.messages.removeFirst() }
    }

    /// True when `id` was not watched yet (the caller asks the watcher to watch it).
    func startWatching(_ id: ActorID) -> Bool { state.withLock { $0.watched.insert(id).inserted } }
    func hasTermination(of id: ActorID) -> Bool { state.withLock { $0.terminations[id] != nil } }
    func takeTermination(of id: ActorID) -> Terminated? { state.withLock { $0.terminations.removeValue(forKey: id) } }
}

/// The probe's recipient: records each message.
private final class RecordingActor<Message: Sendable>: EventActor {
    let recording: Recording<Message>
    init(recording: Recording<Message>) { self.recording = recording }

    func receive(_ message: Message, context: ActorContext<Message>) { recording.record(message) }
}

/// A watch to start, run in the watcher's turn (watching happens in a turn).
private struct WatchRequest<Message: Sendable>: Sendable {
    let perform: @Sendable (ActorContext<WatchRequest>) -> Void
}

/// Watches actors for the probe and records their stops.
private final class Watcher<Message: Sendable>: EventActor {
    let recording: Recording<Message>
    init(recording: Recording<Message>) { self.recording = recording }

    func receive(_ request: WatchRequest<Message>, context: ActorContext<WatchRequest<Message>>) {
        request.perform(context)
    }

    func receiveSignal(_ signal: Signal, context: ActorContext<WatchRequest<Message>>) {
        switch signal {
        case .terminated(let terminated): recording.record(terminated)
        }
    }
}
