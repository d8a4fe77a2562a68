// ScheduledUnit — anything the M:N scheduler runs one turn at a time (an actor with
// messages, a native actor's job queue, a lane of task jobs).
// model: Models/scheduled_unit.pml (spin; scripts/model-check.sh checks it, Models/README.md)
//
// ## The state word
// Each unit carries one atomic byte, `state`, with four values:
//
//   idle       not queued, not running. The only state from which a unit is queued.
//   scheduled  in exactly one run queue / next slot / injection queue; a worker will run it.
//   running    a worker is inside runTurn.
//   notified   running, and schedule() was called during the turn: run it again after.
//
// Transitions (who performs each, in parentheses):
//   (T1) idle      → scheduled  schedule(): CAS. The winner (and only the winner) pushes the
//                               unit onto a queue, holding one retain for the queue.
//   (T2) running   → notified   schedule(): CAS. Nothing is pushed; the worker re-queues.
//   (T3) scheduled → running    the worker that popped the unit: CAS (it is the only holder
//                               of the queue's retain, so nobody else can move it out of
//                               scheduled; the CAS doubles as a "queued twice" check).
//   (T4) running   → idle       worker after a turn that returned .idle: CAS.
//   (T5) running|notified → scheduled  worker after a turn that returned .more, or whose T4
//                               CAS failed because of T2: the worker re-queues the unit.
//   schedule() on scheduled or notified changes nothing (the pending run will see the new
//   work; see Orderings for why it still writes the word).
//   After the scheduler shut down, a unit that would be queued goes through the same T1,
//   T3 and T4/T5 transitions around `runAfterShutdown()` instead of `runTurn` (see
//   "After close" in Scheduler.swift), so R1–R3 hold for it too.
//
// Rules that follow:
//   (R1) never queued twice: only T1 pushes, and T1 needs idle; idle is left only by T1.
//   (R2) never on two workers at once: only T3 enters running, from scheduled, which is
//        held by one queue entry; the next T1 needs idle, reached only after the turn (T4).
//   (R3) no missed work: a producer makes its work visible, then calls schedule(). If the
//        unit is running, T2 records it and T4 fails, so T5 re-queues it; if the turn
//        already ended with T4, the producer's T1 succeeds and queues it. Either way a
//        turn starts after the work was published.
// Orderings: every CAS is acquiring-and-releasing, so the turn's writes happen-before the
// next schedule() that observes idle, and a producer's writes happen-before the turn that
// follows its T2 (the queue push/pop adds its own release/acquire edge on top). schedule()
// on scheduled/notified also writes the word (a CAS to the same value) for the same reason:
// the worker's next T3/T4 CAS reads from that write, so the producer's work is visible to
// the turn it relies on; a plain load would leave a store-buffer window (Dekker).

import Synchronization

/// What a turn left behind: decides whether the unit goes idle or back into the run queue.
public enum TurnOutcome: Sendable {
    /// No work left: the unit goes idle; a later `schedule` makes it runnable again.
    case idle
    /// Work remains: the unit goes to the back of the run queue.
    case more
}

/// Base class of anything the scheduler runs one turn at a time. Holds the atomic state word.
///
/// Subclass it and override `runTurn(budget:)`. Thread-safety: `Scheduler.schedule(_:)`
/// may be called for the same unit from any number of threads at once; the scheduler
/// guarantees `runTurn` is never called concurrently with itself, and that a `schedule`
/// that happens during a turn causes another turn (see the file comment for the
/// transitions). A unit must be scheduled on one scheduler at a time.
open class ScheduledUnit: @unchecked Sendable {
    // @unchecked: the only shared mutable state is `state`, an Atomic; subclasses own the
    // safety of their own fields (runTurn is never concurrent with itself).

    @usableFromInline static let idle: UInt8 = 0
    @usableFromInline static let scheduled: UInt8 = 1
    @usableFromInline static let running: UInt8 = 2
    @usableFromInline static let notified: UInt8 = 3

    /// The state word. Written by schedule() (T1, T2 from any thread) and by the worker
    /// that holds the unit (T3, T4, T5); all writes are CAS/exchange with acquire-release
    /// ordering, see the file comment.
    @usableFromInline let state = Atomic<UInt8>(0)

    public init() {}

    /// Called on a worker, never concurrently with itself. Process at most `budget` items.
    /// Return `.idle` when no work is left (the unit goes idle; a later `schedule()` wakes
    /// it), `.more` to be re-queued at the back of the run queue.
    ///
    /// The base implementation traps: a subclass must override it.
    open func runTurn(budget: Int) -> TurnOutcome {
        preconditionFailure("ScheduledUnit.runTurn(budget:) must be overridden by \(type(of: self))")
    }

    /// Called instead of `runTurn` once the unit's scheduler has shut down: a schedule()
    /// that arrives after shutdown's hand-back, a unit that was still queued at shutdown,
    /// or one re-queued by a turn that outlived the shutdown timeout. The caller holds the
    /// unit exclusively (never concurrently with a turn or with itself); it is called again
    /// if the unit is scheduled while it runs. Override it to account for pending work
    /// (move it elsewhere, or report it); the base implementation does nothing.
    open func runAfterShutdown() {}

    // MARK: transitions (package: used by the scheduler and its tests)

    /// T1/T2: returns true when the caller won idle → scheduled and must push the unit.
    @inlinable @inline(__always)
    package func transitionToScheduled() -> Bool {
        // First try T1 blind (idle is the common case: an actor that had no messages), so
        // the usual path is one CAS and no separate load; the loop below handles the rest.
        let (won, seen) = state.compareExchange(
            expected: ScheduledUnit.idle, desired: ScheduledUnit.scheduled, ordering: .acquiringAndReleasing)
        if won { return true }
        var current = seen
        while true {
            let desired: UInt8
            switch current {
            case ScheduledUnit.idle: desired = ScheduledUnit.scheduled
            case ScheduledUnit.running: desired = ScheduledUnit.notified
            // scheduled or notified: a run is already due. Still write the word (same value):
            // a read alone would not order the caller's work before that run (R3), since
            // the caller's earlier stores may not be visible yet; a release RMW does, because
            // the worker's next CAS on the word reads from it.
            default: desired = current
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return current == ScheduledUnit.idle }
            current = original
        }
    }

    /// T3: the worker that popped the unit starts its turn.
    @inlinable @inline(__always)
    package func transitionToRunning() {
        let (exchanged, original) = state.compareExchange(
            expected: ScheduledUnit.scheduled, desired: ScheduledUnit.running, ordering: .acquiringAndReleasing)
        precondition(exchanged, "ScheduledUnit popped from a run queue in state \(original), not scheduled: queued twice?")
    }

    /// T4/T5: after a turn. Returns true when the unit must be re-queued (it is scheduled).
    @inlinable @inline(__always)
    package func transitionAfterTurn(_ outcome: TurnOutcome) -> Bool {
        if outcome == .idle {
            let (exchanged, _) = state.compareExchange(
                expected: ScheduledUnit.running, desired: ScheduledUnit.idle, ordering: .acquiringAndReleasing)
            if exchanged { return false }
        }
        // An exchange, not a store: it reads (acquires) a producer's T2 write, so that
        // producer's work is visible to whoever runs the next turn.
        _ = state.exchange(ScheduledUnit.scheduled, ordering: .acquiringAndReleasing)
        return true
    }

    /// The current state, for tests and diagnostics (a snapshot).
    package var stateSnapshot: UInt8 { state.load(ordering: .acquiring) }
}
