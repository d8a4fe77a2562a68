// AnyActorCell+Backoff — a supervisor's restart after a delay
// (SupervisorStrategy.restartWithBackoff): the failed instance stops at once, the fresh one
// starts when a CellTimer on the scheduler's clock fires.
//
// While the restart is pending (`Extras.restartPending`, turn-confined like every field
// of Extras) the cell's turns hand no message to a behaviour: the general turn returns
// after the system queue, before the mailbox and the unstashed list, and the fast path is
// closed (ActorCellBase: `needsGeneralTurn`, and `offFastPath` for the rest of a pass in
// which the failure happened: those messages go to the priority list, ahead of the
// mailbox, so order is kept). Messages therefore wait where they are, a bounded mailbox
// keeps its bound, and the timer's system message schedules the turn that restarts the
// actor; that turn then handles the unstashed list and the mailbox as usual.
// Terminations of watched actors that arrive meanwhile are kept for the fresh instance
// (`BackoffState.deferredTerminations`), and a failure reported meanwhile (a child of the failed
// instance escalating) is ignored (AnyActorCell.handleFailure). A stop meanwhile cancels
// the timer and skips postStop, which already ran for the failed instance
// (`cancelPendingRestart`, from the stop).
// Delays: SupervisorStrategy.Backoff.delayNanoseconds; the random draw comes from a
// SplitMix64 per cell, seeded from a DeterministicScheduler's seed and its turn count (so
// a seed replays the same delays), else from the system's random source.

import MNScheduler

/// A cell's back-off restarts: how many in a row, its generator, the pending one. A class,
/// so that Extras (which every actor with children or watchers allocates) grows by one
/// word only. Turn-confined, like Extras.
final class BackoffState {
    /// Restarts in a row (reset after a long enough run without failure).
    var attempt = 0
    /// Draws the random part of each delay.
    var random: SplitMix64
    /// When the last fresh instance started (scheduler clock nanoseconds).
    var lastRestartAt: UInt64?
    /// Tells the pending restart's timer event from an earlier one's.
    var generation: UInt64 = 0
    /// The pending restart's timer; nil when none is pending.
    var timer: CellTimer?
    /// Terminations that arrived while the restart was pending, for the fresh instance.
    var deferredTerminations: [Terminated] = []

    init(random: SplitMix64) { self.random = random }
}

/// The event of a back-off restart's timer.
final class BackoffElapsed: CellTimerEvent, @unchecked Sendable {
    let generation: UInt64
    init(generation: UInt64) { self.generation = generation }
    override func fire(in cell: AnyActorCell) { cell.finishBackoff(generation: generation) }
}

extension AnyActorCell {
    /// Starts the delay of a back-off restart (in the failing turn, after the failed
    /// instance stopped): the fresh instance starts when it ends (`finishBackoff`).
    final func beginBackoff(_ backoff: SupervisorStrategy.Backoff) {
        let clock = system.scheduler.clock
        let now = clock.nanoseconds()
        let state = extras.backoff ?? BackoffState(random: SplitMix64(seed: backoffSeed()))
        if let last = state.lastRestartAt, now &- last >= backoff.resetAfter.saturatingNanoseconds {
            state.attempt = 0
        }
        let unit = Double(state.random.next() >> 11) * 0x1p-53  // uniform in 0..<1
        let delay = backoff.delayNanoseconds(attempt: state.attempt, unit: unit)
        state.attempt = state.attempt < Int.max ? state.attempt + 1 : state.attempt
        state.generation &+= 1
        state.timer = CellTimer(cell: self, event: BackoffElapsed(generation: state.generation),
                                clock: clock, delay: delay, interval: nil)
        extras.backoff = state
        extras.restartPending = true
        logger.debug("restart delayed by back-off",
                     metadata: ["supervisor/backoff": "\(Duration.nanoseconds(Int64(clamping: delay)))",
                                "supervisor/attempt": "\(state.attempt)"])
    }

    /// The back-off delay ended (the timer's event, in a turn of a cell not stopped):
    /// starts the fresh instance, then hands it the terminations that arrived meanwhile.
    final func finishBackoff(generation: UInt64) {
        guard let extras = extrasStorage, extras.restartPending, let state = extras.backoff,
              state.generation == generation else { return }
        extras.restartPending = false
        state.timer = nil
        state.lastRestartAt = system.scheduler.clock.nanoseconds()
        startRestartedInstance()
        let deferred = state.deferredTerminations
        state.deferredTerminations = []
        for termination in deferred where pendingStop == nil { handleTerminated(termination) }
    }

    /// Keeps a termination that arrived while a restart is pending for the fresh instance;
    /// false when none is pending (the caller handles it now).
    final func deferTerminationDuringRestart(_ termination: Terminated) -> Bool {
        guard let extras = extrasStorage, extras.restartPending, let state = extras.backoff else { return false }
        state.deferredTerminations.append(termination)
        return true
    }

    /// Ends a pending back-off restart because the actor stops (from the stop itself).
    /// Returns true when one was pending: the failed instance's postStop already ran.
    final func cancelPendingRestart() -> Bool {
        guard let extras = extrasStorage, extras.restartPending else { return false }
        extras.backoff?.timer?.cancel()
        extras.backoff?.timer = nil
        extras.backoff?.deferredTerminations = []
        extras.restartPending = false
        return true
    }

    /// The seed of this cell's back-off generator, made at its first back-off: on a
    /// deterministic scheduler its seed mixed with the number of turns run so far (the
    /// same for the same seed, D3; actor ids are process-wide, so they would not replay),
    /// else random.
    private func backoffSeed() -> UInt64 {
        guard let engine = system.scheduler.deterministicEngine else {
            var generator = SystemRandomNumberGenerator()
            return generator.next()
        }
        var mixer = SplitMix64(seed: engine.seed ^ (UInt64(truncatingIfNeeded: engine.turns) &* 0x9E37_79B9_7F4A_7C15))
        return mixer.next()
    }
}
