// ActorTimers — `context.timers`: messages an actor sends itself after a delay or
// periodically, by key (Akka's `Behaviors.withTimers`, Erlang's `send_after`).
//
// The table (ActorTimerTable, in the cell's TypedExtras, turn-confined) maps each key to
// its entry: the message, a generation number and the armed CellTimer. A firing sends a
// TimerFiring event (key, generation) through the cell's system queue; the turn that
// handles it delivers the entry's message only if the key still maps to that generation.
// So a timer replaced, cancelled or ended by a stop or restart never delivers a message,
// even one already on its way (Akka's rule). Delivered timer messages are counted as
// sent by the runtime and delivered, like a watch's message.
// Stop and restart cancel every timer (ActorCellBase.resetBehaviourState).

import MNScheduler
import Synchronization

/// The longest delay or interval a timer accepts (``ActorTimers/longestDuration``).
let longestTimerDuration: Duration = .seconds(100 * 86_400)

/// The timers of one actor, from ``ActorContext/timers``: messages the actor sends itself
/// once after a delay, or periodically, each under a key.
///
/// - Keys: starting a timer under a key already in use replaces that timer, and a message
///   of the replaced timer that is already on its way is not delivered. The same holds
///   for ``cancel(key:)`` and ``cancelAll()``: once they return, the cancelled timers
///   deliver nothing.
/// - Delivery: in the actor's turn, as an ordinary message to its behaviour (the current
///   `become` behaviour if any). Timer messages travel with the actor's lifecycle
///   traffic, so they are handled before messages still waiting in the mailbox; the
///   firings of one periodic timer arrive in order.
/// - Clock: the scheduler's. On a `DeterministicScheduler` the timers fire only when the
///   test advances virtual time (`advanceTime(by:)`), at exactly their deadlines; a
///   periodic timer fires at `start + initialDelay + k × interval`, never drifting.
/// - Stop and restart: every timer is cancelled when the actor stops and when its
///   supervisor restarts it (a fresh instance starts its own in `preStart`). Starting a
///   timer once the actor has stopped (in `postStop`) does nothing.
/// - Thread-safety: like ``ActorContext``, valid only during the call it came from. A use
///   outside the actor's turn stops at an assertion in debug builds; in release builds
///   the start methods throw ``TimerError/contextUsedOutsideTurn`` and the others do
///   nothing.
/// - Actors: event actors, closure actors and value behaviours. Sequential actors have
///   no context: they wait with a timeout (`Inbox.receive(timeout:)`) instead.
public struct ActorTimers<Message: Sendable> {
    let context: ActorContext<Message>

    /// The longest delay or interval accepted: 100 days. Longer ones are mistakes, not
    /// plans, and are refused with a ``TimerError``.
    public static var longestDuration: Duration { longestTimerDuration }

    /// Sends `message` to this actor once, `delay` from now, unless cancelled or replaced
    /// first. Replaces any timer under `key`.
    /// - Parameters:
    ///   - key: names the timer, for replacing and cancelling it.
    ///   - message: what the actor receives.
    ///   - delay: `0...longestDuration`; zero sends it at the next turn.
    /// - Throws: ``TimerError/invalidDelay(_:)`` for a negative or too long delay (no
    ///   timer is started and an existing one under `key` is kept).
    public func startSingle<Key: Hashable & Sendable>(key: Key, message: Message, after delay: Duration) throws(TimerError) {
        guard delay >= .zero, delay <= longestTimerDuration else { throw .invalidDelay(delay) }
        try start(key: AnyHashable(key), message: message, delay: delay, interval: nil)
    }

    /// Sends `message` to this actor every `interval`, the first time `initialDelay`
    /// (default: `interval`) from now, until cancelled, replaced, or the actor stops or
    /// restarts. Replaces any timer under `key`. If the actor is busy, firings queue up:
    /// none is skipped.
    /// - Throws: ``TimerError/invalidInterval(_:)`` for an interval that is not positive or
    ///   is too long, ``TimerError/invalidDelay(_:)`` for a negative or too long initial
    ///   delay (no timer is started and an existing one under `key` is kept).
    public func startPeriodic<Key: Hashable & Sendable>(
        key: Key, message: Message, interval: Duration, initialDelay: Duration? = nil
    ) throws(TimerError) {
        guard interval > .zero, interval <= longestTimerDuration else { throw .invalidInterval(interval) }
        let delay = initialDelay ?? interval
        guard delay >= .zero, delay <= longestTimerDuration else { throw .invalidDelay(delay) }
        try start(key: AnyHashable(key), message: message, delay: delay, interval: interval)
    }

    /// Cancels the timer under `key`, if any: it delivers nothing from now on, not even a
    /// message already on its way.
    public func cancel<Key: Hashable & Sendable>(key: Key) {
        guard let cell = turnCell("timers.cancel") else { return }
        cell.typedExtras?.timers?.cancel(AnyHashable(key))
    }

    /// Cancels every timer of this actor (as ``cancel(key:)`` for each).
    public func cancelAll() {
        guard let cell = turnCell("timers.cancelAll") else { return }
        cell.typedExtras?.timers?.cancelAll()
    }

    /// True while a timer under `key` may still deliver: a periodic timer until cancelled,
    /// a single one until its message has been delivered.
    public func isActive<Key: Hashable & Sendable>(key: Key) -> Bool {
        guard let cell = turnCell("timers.isActive") else { return false }
        return cell.typedExtras?.timers?.entries[AnyHashable(key)] != nil
    }

    /// The cell, when used inside its turn.
    private func turnCell(_ operation: String) -> ActorCellBase<Message>? {
        let cell = context.cell
        return cell.checkInTurn(operation) ? cell : nil
    }

    private func start(key: AnyHashable, message: Message, delay: Duration, interval: Duration?) throws(TimerError) {
        guard let cell = turnCell("timers.start") else { throw .contextUsedOutsideTurn }
        if cell.isStopped { return }  // postStop: stop has cancelled every timer, and keeps it so
        let table: ActorTimerTable<Message>
        if let existing = cell.typed.timers {
            table = existing
        } else {
            table = ActorTimerTable()
            cell.typed.timers = table
        }
        table.start(key: key, message: message, cell: cell,
                    delay: delay.saturatingNanoseconds, interval: interval?.saturatingNanoseconds)
    }
}

extension ActorContext {
    /// This actor's timers: messages it sends itself after a delay or periodically, by
    /// key. See ``ActorTimers`` for the guarantees (replacement by key, cancellation on
    /// stop and restart, virtual time under a deterministic scheduler).
    ///
    /// ```swift
    /// func preStart(context: ActorContext<Message>) throws {
    ///     try context.timers.startPeriodic(key: "tick", message: .tick, interval: .seconds(1))
    /// }
    /// ```
    public var timers: ActorTimers<Message> { ActorTimers(context: self) }
}

/// One actor's active timers (turn-confined: in its cell's TypedExtras).
final class ActorTimerTable<Message: Sendable> {
    struct Entry {
        let generation: UInt64
        let message: Message
        let periodic: Bool
        let timer: CellTimer
    }

    /// The active timers by key.
    private(set) var entries: [AnyHashable: Entry] = [:]
    /// The last generation handed out (per table: keys never share one).
    private var generation: UInt64 = 0

    /// Arms a timer under `key`, replacing (and cancelling) the one there.
    func start(key: AnyHashable, message: Message, cell: ActorCellBase<Message>, delay: UInt64, interval: UInt64?) {
        entries.removeValue(forKey: key)?.timer.cancel()
        generation &+= 1
        let timer = CellTimer(cell: cell, event: TimerFiring<Message>(key: key, generation: generation),
                              clock: cell.system.scheduler.clock, delay: delay, interval: interval)
        entries[key] = Entry(generation: generation, message: message, periodic: interval != nil, timer: timer)
    }

    func cancel(_ key: AnyHashable) {
        entries.removeValue(forKey: key)?.timer.cancel()
    }

    func cancelAll() {
        for entry in entries.values { entry.timer.cancel() }
        entries = [:]
    }

    /// The message a firing delivers, nil when its timer was replaced or cancelled since
    /// (another generation, or no entry). A single timer's entry ends here.
    func take(key: AnyHashable, generation: UInt64) -> Message? {
        guard let entry = entries[key], entry.generation == generation else { return nil }
        if !entry.periodic { entries[key] = nil }
        return entry.message
    }
}

/// A timer's firing, handled in the cell's turn (see the file comment).
final class TimerFiring<Message: Sendable>: CellTimerEvent, @unchecked Sendable {
    // @unchecked: immutable; `key` was Hashable & Sendable when wrapped.
    let key: AnyHashable
    let generation: UInt64

    init(key: AnyHashable, generation: UInt64) {
        self.key = key
        self.generation = generation
    }

    override func fire(in cell: AnyActorCell) {
        let cell = unsafeDowncast(cell, to: ActorCellBase<Message>.self)
        guard let message = cell.typedExtras?.timers?.take(key: key, generation: generation) else { return }
        cell.system.runtimeSent.wrappingAdd(1, ordering: .relaxed)  // sent by the runtime
        cell.countUndelivered(-1)  // handed over, not taken from the mailbox
        cell.invoke(message)
    }
}
