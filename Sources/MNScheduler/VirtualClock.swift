// VirtualClock — the time of a deterministic scheduler: nanoseconds that move only when
// the test calls `DeterministicScheduler.advanceTime(by:)`, and the timers due on it.
//
// Invariants:
//  (V1) `now` never decreases; it starts at 0.
//  (V2) advance(by:) fires every timer whose deadline is at most the target, in order of
//       (deadline, registration), each with `now` equal to its deadline; a timer added by
//       an action for a deadline within the target fires in the same advance.
//  (V3) actions run outside the lock, on the advancing thread, one at a time (the caller
//       holds the scheduler's drive guard), so they may add timers or schedule units.
//  (V4) time saturates at `UInt64.max` nanoseconds, and so do deadlines computed from it.
//       That maximum is a deadline like any other: a timer at it fires when the clock
//       reaches it, or in the next advance (even by zero) if added later. So a timeout on
//       a saturated clock ends early rather than never. (`.max` is not "no deadline".)
// Thread-safety: every member may be called from any thread (one lock).

/// Virtual nanoseconds and the timers due on them (see the file comment).
package final class VirtualClock: Sendable {
    private struct Timer {
        var deadline: UInt64
        var sequence: UInt64
        var action: @Sendable () -> Void
    }

    private struct State {
        var now: UInt64 = 0
        var nextSequence: UInt64 = 0
        var timers: [Timer] = []
    }

    private let state = Lock<State>(State())

    package init() {}

    /// The virtual time in nanoseconds (0 at creation).
    package var nanoseconds: UInt64 { state.withLock { $0.now } }

    /// Timers registered and not yet fired.
    package var pendingTimers: Int { state.withLock { $0.timers.count } }

    /// The earliest pending timer's deadline, nil when none is pending.
    package var nextDeadline: UInt64? { state.withLock { $0.timers.lazy.map(\.deadline).min() } }

    /// Runs `action` when the clock reaches `deadline` (at the next advance if it already has).
    package func addTimer(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.timers.append(Timer(deadline: deadline, sequence: state.nextSequence, action: action))
            state.nextSequence &+= 1
        }
    }

    /// Moves the clock `nanoseconds` forward (saturating at `UInt64.max`, V4), firing the
    /// timers due (V2).
    /// Returns the number of timers fired.
    @discardableResult
    package func advance(by nanoseconds: UInt64) -> Int {
        let target = state.withLock { state -> UInt64 in
            let (sum, overflow) = state.now.addingReportingOverflow(nanoseconds)
            return overflow ? .max : sum
        }
        var fired = 0
        while let action = takeDueTimer(upTo: target) {
            action()
            fired += 1
        }
        state.withLock { $0.now = max($0.now, target) }
        return fired
    }

    /// The earliest timer due at or before `target` (ties: first registered), removed, with
    /// the clock moved to its deadline; nil when none is due.
    private func takeDueTimer(upTo target: UInt64) -> (@Sendable () -> Void)? {
        state.withLock { state in
            var best: Int?
            for index in state.timers.indices where state.timers[index].deadline <= target {
                if let current = best {
                    let a = state.timers[index], b = state.timers[current]
                    if (a.deadline, a.sequence) < (b.deadline, b.sequence) { best = index }
                } else {
                    best = index
                }
            }
            guard let best else { return nil }
            let timer = state.timers.remove(at: best)
            state.now = max(state.now, timer.deadline)
            return timer.action
        }
    }
}
