// CellTimer — one timer of an actor cell on its scheduler's clock: at its deadline (and
// every `interval` after, for a periodic one) it puts its event into the cell's system
// queue, where the cell's next turn handles it (`CellTimerEvent.fire(in:)`).
//
// Users: `context.timers` (ActorTimers.swift) and the back-off restart (AnyActorCell+Backoff.swift).
// Clock: the scheduler's (SchedulerClock). A real clock arms a Dispatch timer; the virtual
// clock of a DeterministicScheduler gets a VirtualClock timer, which fires when the test
// advances time past its deadline, so timers follow virtual time exactly. A periodic
// timer's deadlines are `first + k * interval` (no drift from late firings).
// Cancellation: `cancel()` drops the reference to the cell under the lock, so a firing
// that races with it either sent its event before (the cell's turn then finds the event
// stale: the user of the timer checks a generation) or sends nothing. Sending is all a
// firing does off the turn: it never touches the cell's turn-confined state.
// Lifetime: an armed timer holds its cell (a strong reference: a weak one would give the
// cell a side table, and every retain of a cell would take the slow path). The cell's
// owner cancels every timer when the actor stops or restarts, which releases the cell
// and, on a real clock, the Dispatch source (whose handler holds the timer). A virtual
// clock keeps a cancelled timer's action until its deadline passes; the action then finds
// no cell and does nothing.
// Thread-safety: every method from any thread (one lock).

import Dispatch
import MNScheduler

/// Something a timer delivers to a cell, handled in the cell's turn (through the system
/// queue: `SystemMessage.timerFired`). Immutable once armed.
class CellTimerEvent: @unchecked Sendable {
    // @unchecked: subclasses hold only immutable fields.
    /// Runs in `cell`'s turn, when the cell is not stopped.
    func fire(in cell: AnyActorCell) {}
}

/// One armed timer (see the file comment).
final class CellTimer: Sendable {
    private struct State {
        /// The cell to send to; nil once cancelled or (single-shot) fired.
        var cell: AnyActorCell?
        /// The Dispatch timer on a real clock.
        var source: (any DispatchSourceTimer)?
    }

    private let state = Lock<State>(State())
    private let event: CellTimerEvent
    private let clock: SchedulerClock
    /// Nanoseconds between firings; nil for a single-shot timer.
    private let interval: UInt64?

    /// Arms a timer that sends `event` to `cell` `delay` nanoseconds from now on `clock`,
    /// then every `interval` nanoseconds if one is given (it must be positive).
    init(cell: AnyActorCell, event: CellTimerEvent, clock: SchedulerClock, delay: UInt64, interval: UInt64?) {
        precondition(interval.map { $0 > 0 } ?? true, "CellTimer: a periodic timer needs a positive interval")
        self.event = event
        self.clock = clock
        self.interval = interval
        let first = clock.deadline(afterNanoseconds: delay)
        state.withLock { $0.cell = cell }
        if let virtual = clock.virtual {
            armVirtual(virtual, at: first)
        } else {
            let source = DispatchSource.makeTimerSource(queue: .global())
            let deadline = DispatchTime(uptimeNanoseconds: first)
            if let interval {
                source.schedule(deadline: deadline, repeating: .nanoseconds(Int(clamping: interval)), leeway: .milliseconds(1))
            } else {
                source.schedule(deadline: deadline, leeway: .milliseconds(1))
            }
            source.setEventHandler { [self] in fireOnDispatch() }
            state.withLock { $0.source = source }
            source.activate()
        }
    }

    /// Stops the timer: no event is sent after this returns. Idempotent.
    func cancel() {
        let source = state.withLock { state -> (any DispatchSourceTimer)? in
            state.cell = nil
            defer { state.source = nil }
            return state.source
        }
        source?.cancel()  // Dispatch releases the handler, and with it this timer
    }

    private func fireOnDispatch() {
        guard let cell = state.withLock({ $0.cell }) else { return }
        if interval == nil { cancel() }
        cell.sendSystem(.timerFired(event))
    }

    private func armVirtual(_ virtual: VirtualClock, at deadline: UInt64) {
        virtual.addTimer(at: deadline) { [self] in fireOnVirtualClock(virtual, deadline: deadline) }
    }

    /// A virtual timer's action: sends the event and, for a periodic timer, arms the next
    /// deadline (VirtualClock V2: one within the advance fires in the same advance). A
    /// next deadline past `UInt64.max` is never armed: the clock cannot get there.
    private func fireOnVirtualClock(_ virtual: VirtualClock, deadline: UInt64) {
        guard let cell = state.withLock({ $0.cell }) else { return }
        if let interval {
            let (next, overflow) = deadline.addingReportingOverflow(interval)
            if overflow { cancel() } else { armVirtual(virtual, at: next) }
        } else {
            cancel()
        }
        cell.sendSystem(.timerFired(event))
    }
}
