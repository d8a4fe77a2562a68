// ActorTimers: `context.timers`, messages an actor sends itself after a delay or
// periodically, by key.
//
// ActorTimerTable (turn-confined) maps a key to its message, generation and CellTimer. A
// firing goes through the system queue with its generation and delivers only if the key
// still maps to it: a replaced or cancelled timer never delivers.

import MNScheduler
import Synchronization

/// ``ActorTimers/longestDuration``.
let longestTimerDuration: Duration = .seconds(100 * 86_400)

/// The timers of one actor, from ``ActorContext/timers``: messages the actor sends itself
/// once after a delay, or periodically, each under a key (<doc:TimersAndAsyncResults>).
///
/// - Keys: starting a timer under a key in use replaces it. Once a replace,
///   ``cancel(key:)`` or ``cancelAll()`` returns, the old timer delivers nothing, not even
///   a firing already on its way.
/// - Delivery: in the actor's turn, to its current behaviour, ahead of messages waiting
///   in the mailbox; one periodic timer's firings arrive in order.
/// - Clock: the scheduler's. On a `DeterministicScheduler` timers fire when the test
///   advances virtual time, at exactly their deadlines; periodic ones never drift.
/// - Stop and restart cancel every timer; starting one in `postStop` does nothing.
/// - Thread-safety: valid only during the call its context came from. Outside the turn:
///   a debug assertion; in release the start methods throw
///   ``TimerError/contextUsedOutsideTurn`` and the others do nothing.
public struct ActorTimers<Message: Sendable> {
    let context: ActorContext<Message>

    /// The longest delay or interval accepted: 100 days (else a ``TimerError``).
    public static var longestDuration: Duration { longestTimerDuration }

    /// Sends `message` to this actor once, `delay` (`0...longestDuration`) from now,
    /// replacing any timer under `key`.
    /// - Throws: ``TimerError/invalidDelay(_:)``; no timer starts, the one under `key` stays.
    public func startSingle<Key: Hashable & Sendable>(key: Key, message: Message, after delay: Duration) throws(TimerError) {
        guard delay >= .zero, delay <= longestTimerDuration else { throw .invalidDelay(delay) }
        try start(key: AnyHashable(key), message: message, delay: delay, interval: nil)
    }

    /// Sends `message` every `interval`, first after `initialDelay` (default: `interval`),
    /// replacing any timer under `key`. If the actor is busy, firings queue: none is skipped.
    /// - Throws: ``TimerError/invalidInterval(_:)`` or ``TimerError/invalidDelay(_:)``; no
    ///   timer starts, the one under `key` stays.
    public func startPeriodic<Key: Hashable & Sendable>(
        key: Key, message: Message, interval: Duration, initialDelay: Duration? = nil
    ) throws(TimerError) {
        guard interval > .zero, interval <= longestTimerDuration else { throw .invalidInterval(interval) }
        let delay = initialDelay ?? interval
        guard delay >= .zero, delay <= longestTimerDuration else { throw .invalidDelay(delay) }
        try start(key: AnyHashable(key), message: message, delay: delay, interval: interval)
    }

    /// Cancels the timer under `key`, if any.
    public func cancel<Key: Hashable & Sendable>(key: Key) {
        guard let cell = turnCell("timers.cancel") else { return }
        cell.typedExtras?.timers?.cancel(AnyHashable(key))
    }

    /// Cancels every timer of this actor.
    public func cancelAll() {
        guard let cell = turnCell("timers.cancelAll") else { return }
        cell.typedExtras?.timers?.cancelAll()
    }

    /// True while a timer under `key` may deliver.
    public func isActive<Key: Hashable & Sendable>(key: Key) -> Bool {
        guard let cell = turnCell("timers.isActive") else { return false }
        return cell.typedExtras?.timers?.entries[AnyHashable(key)] != nil
    }

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
    /// This actor's timers (see ``ActorTimers``).
    ///
    /// ```swift
    /// func preStart(context: ActorContext<Message>) throws {
    ///     try context.timers.startPeriodic(key: "tick", message: .tick, interval: .seconds(1))
    /// }
    /// ```
    public var timers: ActorTimers<Message> { ActorTimers(context: self) }
}

/// One actor's active timers (turn-confined).
final class ActorTimerTable<Message: Sendable> {
    struct Entry {
        let generation: UInt64
        let message: Message
        let periodic: Bool
        let timer: CellTimer
    }

    private(set) var entries: [AnyHashable: Entry] = [:]
    private var generation: UInt64 = 0

    /// Replaces (and cancels) the timer under `key`.
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

    /// nil when the timer was replaced or cancelled.
    func take(key: AnyHashable, generation: UInt64) -> Message? {
        guard let entry = entries[key], entry.generation == generation else { return nil }
        if !entry.periodic { entries[key] = nil }
        return entry.message
    }
}

/// A timer's firing, handled in the cell's turn.
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
