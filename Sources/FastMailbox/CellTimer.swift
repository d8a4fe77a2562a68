// CellTimer: one timer of an actor cell (ActorTimers, back-off restarts). At its deadline,
// and every `interval` after (`first + k × interval`, no drift), it puts its event into
// the cell's system queue; a VirtualClock timer on a DeterministicScheduler. `cancel()`
// drops the cell under the lock, so a racing firing sent before (found stale by its
// generation) or sends nothing. An armed timer holds its cell; stop and restart cancel
// every timer. Thread-safe (one lock).

import Dispatch
import MNScheduler

/// What a timer delivers, handled in the cell's turn.
class CellTimerEvent: @unchecked Sendable {
    // @unchecked: subclasses hold only immutable fields.
    /// In `cell`'s turn, unless stopped.
    func fire(in cell: AnyActorCell) {}
}

/// One armed timer.
final class CellTimer: Sendable {
    private struct State {
        /// nil once cancelled or (single-shot) fired.
        var cell: AnyActorCell?
        /// On a real clock.
        var source: (any DispatchSourceTimer)?
    }

    private let state = Lock<State>(State())
    private let event: CellTimerEvent
    private let clock: SchedulerClock
    /// nil for a single-shot timer.
    private let interval: UInt64?

    /// `delay` and `interval` in nanoseconds.
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

    /// No event is sent after this returns. Idempotent.
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

    /// The clock's entry holds neither this timer nor the clock: a cancelled timer's entry
    /// stays until its deadline, and strong ones would be cycles through the clock. The
    /// timer's owner (the timer table, the back-off state) keeps an armed timer alive.
    private func armVirtual(_ virtual: VirtualClock, at deadline: UInt64) {
        virtual.addTimer(at: deadline) { [weak self, unowned virtual] in
            self?.fireOnVirtualClock(virtual, deadline: deadline)
        }
    }

    /// Sends the event and arms a periodic timer's next deadline (VirtualClock V2).
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
