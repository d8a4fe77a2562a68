// AnyActorCell+Backoff: a supervisor's restart after a delay. The failed instance stops
// at once; the fresh one starts when a CellTimer fires; meanwhile no message reaches a
// behaviour. The rules: <doc:ActorCells>, "Back-off restarts".

import MNScheduler

/// A cell's back-off restarts (a class: Extras grows by one word). Turn-confined.
final class BackoffState {
    /// Restarts in a row.
    var attempt = 0
    var random: SplitMix64
    /// When the last fresh instance started (scheduler clock).
    var lastRestartAt: UInt64?
    /// Tells the pending timer's event from an earlier one's.
    var generation: UInt64 = 0
    /// nil when none is pending.
    var timer: CellTimer?
    /// For the fresh instance.
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
    /// In the failing turn, after the instance stopped.
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

    /// Starts the fresh instance and hands it the terminations that arrived meanwhile.
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

    /// False when no restart is pending.
    final func deferTerminationDuringRestart(_ termination: Terminated) -> Bool {
        guard let extras = extrasStorage, extras.restartPending, let state = extras.backoff else { return false }
        state.deferredTerminations.append(termination)
        return true
    }

    /// The actor stops: true when a restart was pending (postStop already ran).
    final func cancelPendingRestart() -> Bool {
        guard let extras = extrasStorage, extras.restartPending else { return false }
        extras.backoff?.timer?.cancel()
        extras.backoff?.timer = nil
        extras.backoff?.deferredTerminations = []
        extras.restartPending = false
        return true
    }

    /// Seeded from a deterministic scheduler's seed and turn count (D3), else random.
    private func backoffSeed() -> UInt64 {
        guard let engine = system.scheduler.deterministicEngine else {
            var generator = SystemRandomNumberGenerator()
            return generator.next()
        }
        var mixer = SplitMix64(seed: engine.seed ^ (UInt64(truncatingIfNeeded: engine.turns) &* 0x9E37_79B9_7F4A_7C15))
        return mixer.next()
    }
}
