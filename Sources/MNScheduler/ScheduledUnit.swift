// ScheduledUnit: anything the M:N scheduler runs one turn at a time (an actor with
// messages, a native actor's job queue, a lane of task jobs).
// The full protocol and its orderings: MNScheduler.docc/SchedulerProtocols.md ("The state
// word", "Lifetime", "Orderings"). Model: Models/scheduled_unit.pml (Models/README.md).
//
// The state word: one atomic byte, two bits of run state and the owner bit O.
//   idle       not queued, not running. The only state from which a unit is queued.
//   scheduled  in exactly one run queue, next slot or injection queue.
//   running    a worker is inside runTurn.
//   notified   running, and schedule() came during the turn: run it again after.
// Only ownerArrives and ownerLeaves change O (set once, cleared at most once).
//
// Transitions:
//   (T1) idle → scheduled        schedule(), CAS. Only the winner pushes an entry.
//   (T2) running → notified      schedule(), CAS. Nothing is pushed.
//   (T3) scheduled → running     the worker that popped it, fetch-add (checks "queued twice").
//   (T4) running → idle          the worker, after a turn that returned .idle (CAS).
//   (T5) running|notified → scheduled   the worker, after .more or a failed T4; re-queues.
//   schedule() on scheduled or notified writes the same value back (a CAS): see Orderings.
//   After shutdown the same transitions run around runAfterShutdown() instead of runTurn.
//
// Rules:
//   (R1) Never queued twice: only T1 pushes, and T1 needs idle.
//   (R2) Never on two workers at once: only T3 enters running, from scheduled.
//   (R3) No missed work: work published before schedule() is seen by a turn that starts
//        after it (T2 makes T4 fail, so T5 re-queues; after T4, T1 succeeds).
//
// Lifetime: an entry is a raw pointer; it holds a retain only when no owner does.
//   (L1) While not idle, exactly one scheduler-side retain exists: the owner's if O is
//        set, else the entry's. While idle: the owner's if O is set, else none.
//   (L2) T1's winner retains exactly when its CAS read O clear.
//   (L3) A runner whose T4 read O clear releases; one whose T4 read O set never touches
//        the unit again; T5 re-queues the entry as it is.
//   (L4) ownerLeaves clears O by a CAS: on an idle unit the owner releases; otherwise
//        its retain passes to the entry or runner, whose T4 then reads O clear.
//
// Orderings (x86 and ARM): every write of the word is an acquire-release RMW, so each
// turn sees the work of every schedule() it answers. A producer that enqueued and fenced
// may read the word with a plain load (`isDue`): every turn fences after T3 before it
// reads its queue ("Due units").

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
/// that happens during a turn causes another turn (R1–R3 in the file comment). A unit
/// must be scheduled on one scheduler at a time.
open class ScheduledUnit: @unchecked Sendable {
    // @unchecked: the only shared mutable state is `state`, an Atomic; subclasses own the
    // safety of their own fields (runTurn is never concurrent with itself).

    @usableFromInline static let idle: UInt8 = 0
    @usableFromInline static let scheduled: UInt8 = 1
    @usableFromInline static let running: UInt8 = 2
    @usableFromInline static let notified: UInt8 = 3
    /// The run-state bits (idle, scheduled, running, notified).
    @usableFromInline static let runMask: UInt8 = 3
    /// O: an owner holds a retain that keeps the unit alive (L1–L4).
    @usableFromInline static let owner: UInt8 = 4

    /// The state word: run state and O. Written by schedule() (T1, T2 from any thread), by
    /// the runner that holds the unit (T3, T4, T5) and by its owner (ownerLeaves); every
    /// write is an RMW with acquire-release ordering, see the file comment.
    @usableFromInline let state: Atomic<UInt8>

    /// An idle unit without an owner (queue entries hold its retains).
    public init() { state = Atomic(ScheduledUnit.idle) }

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

    /// What a T1/T2 attempt left the caller to do.
    @usableFromInline package enum ScheduleClaim {
        /// Nothing: the unit was already due or running (T2).
        case none
        /// Won T1; O was set: push an unretained entry.
        case pushUnretained
        /// Won T1; O was clear: push a retained entry.
        case pushRetained
    }

    /// T1/T2. `expectingOwner`: the caller's guess of O (an actor cell's schedule: true;
    /// executors' lanes: false), tried first so the usual case is one CAS.
    @inlinable @inline(__always)
    package func transitionToScheduled(expectingOwner: Bool) -> ScheduleClaim {
        // First try T1 blind (idle is the common case: an actor that had no messages), so
        // the usual path is one CAS and no separate load; the loop below handles the rest.
        let guess = expectingOwner ? ScheduledUnit.owner : ScheduledUnit.idle
        let (won, seen) = state.compareExchange(
            expected: guess, desired: guess | ScheduledUnit.scheduled, ordering: .acquiringAndReleasing)
        if won { return expectingOwner ? .pushUnretained : .pushRetained }
        return transitionToScheduledSlow(seen)
    }

    /// transitionToScheduled's first CAS alone: T1 from idle with O as guessed. Returns
    /// what the CAS read: the guess (`owner` if `expectingOwner`, else `idle`) iff it won
    /// T1 (push an entry retained iff `expectingOwner` is false, L2); anything else means
    /// nothing changed, and the caller goes on with `transitionToScheduledSlow(seen)`.
    /// For a schedule() fast path that keeps the loop out of line.
    @inlinable @inline(__always)
    package func transitionToScheduledBlind(expectingOwner: Bool) -> UInt8 {
        let guess = expectingOwner ? ScheduledUnit.owner : ScheduledUnit.idle
        return state.compareExchange(
            expected: guess, desired: guess | ScheduledUnit.scheduled, ordering: .acquiringAndReleasing).original
    }

    /// The loop of transitionToScheduled: `seen` is what the blind CAS read.
    @usableFromInline @inline(never)
    package func transitionToScheduledSlow(_ seen: UInt8) -> ScheduleClaim {
        var current = seen
        while true {
            let owner = current & ScheduledUnit.owner
            let desired: UInt8
            switch current & ScheduledUnit.runMask {
            case ScheduledUnit.idle: desired = owner | ScheduledUnit.scheduled
            case ScheduledUnit.running: desired = owner | ScheduledUnit.notified
            // A run is already due. Still write the same value: the worker's next RMW
            // reads from it, which orders the caller's work before that run (R3).
            default: desired = current
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged {
                guard current & ScheduledUnit.runMask == ScheduledUnit.idle else { return .none }
                return owner != 0 ? .pushUnretained : .pushRetained
            }
            current = original
        }
    }

    /// T1/T2 for a schedule() path: on winning T1, the entry to push, retained iff O was
    /// clear (L2); nil when nothing is to be pushed. The caller holds its own reference.
    @inlinable @inline(__always)
    package func claimEntry(expectingOwner: Bool) -> UnsafeMutableRawPointer? {
        switch transitionToScheduled(expectingOwner: expectingOwner) {
        case .none: return nil
        case .pushUnretained: return Unmanaged.passUnretained(self).toOpaque()
        case .pushRetained: return Unmanaged.passRetained(self).toOpaque()
        }
    }

    /// True when the unit is scheduled or notified (a turn is due), by one plain load: for a
    /// caller that published its work and then fenced ("Due units").
    @inlinable @inline(__always)
    package final var isDue: Bool { state.load(ordering: .relaxed) & ScheduledUnit.scheduled != 0 }

    /// True while a turn runs (running or notified; a snapshot, one plain load).
    @inlinable package final var isInTurn: Bool { state.load(ordering: .relaxed) & ScheduledUnit.running != 0 }

    /// T3: the runner that popped the unit starts its turn. Returns O as it read it (pass
    /// it to transitionAfterTurn).
    @inlinable @inline(__always)
    package func transitionToRunning() -> UInt8 {
        // scheduled (1) + 1 = running (2): O (bit 2) is untouched, no carry out of the run bits.
        let original = state.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        #if !arch(x86_64)
        // The turn's store→load barrier after T3 ("Due units"): `dmb ish` on AArch64. On
        // x86-64 the locked xadd already is one.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        #endif
        precondition(original & ScheduledUnit.runMask == ScheduledUnit.scheduled,
                     "ScheduledUnit popped from a run queue in state \(original), not scheduled: queued twice?")
        return original & ScheduledUnit.owner
    }

    /// What the runner holds after T4/T5 (L3).
    @usableFromInline package enum AfterTurn {
        /// T5: scheduled again; re-queue the entry held (retained as it was).
        case requeue
        /// T4 read O set: the runner owns nothing and must not touch the unit again.
        case idleOwned
        /// T4 read O clear: the runner owns one retain and must release it (the unit may be
        /// freed by that release: touch it no more).
        case idleRelease
    }

    /// T4/T5: after a turn. `owner`: what transitionToRunning returned.
    @inlinable @inline(__always)
    package func transitionAfterTurn(_ outcome: TurnOutcome, owner: UInt8) -> AfterTurn {
        let expected = ScheduledUnit.running | owner
        if outcome == .idle {
            let (exchanged, original) = state.compareExchange(
                expected: expected, desired: owner, ordering: .acquiringAndReleasing)
            if exchanged { return owner != 0 ? .idleOwned : .idleRelease }
            return transitionAfterTurnSlow(.idle, seen: original)
        }
        let (exchanged, original) = state.compareExchange(
            expected: expected, desired: owner | ScheduledUnit.scheduled, ordering: .acquiringAndReleasing)
        if exchanged { return .requeue }
        return transitionAfterTurnSlow(.more, seen: original)
    }

    /// The rest of transitionAfterTurn after its first CAS failed: a T2 came (notified), or
    /// O was cleared during the turn. `seen` is what that CAS read.
    @usableFromInline @inline(never)
    package func transitionAfterTurnSlow(_ outcome: TurnOutcome, seen: UInt8) -> AfterTurn {
        if seen & ScheduledUnit.runMask == ScheduledUnit.notified {
            // T5 from notified: only this runner leaves notified, so notified − 2 =
            // scheduled whatever O is now. An RMW, not a store: it acquires the T2 write.
            state.wrappingSubtract(ScheduledUnit.running, ordering: .acquiringAndReleasing)
            return .requeue
        }
        var current = seen
        while true {
            let owner = current & ScheduledUnit.owner
            // T4 only from running (notified: a schedule() came, T5 instead, R3).
            let toIdle = outcome == .idle && current & ScheduledUnit.runMask == ScheduledUnit.running
            let desired = toIdle ? owner : owner | ScheduledUnit.scheduled
            // A CAS, not a store: it acquires a producer's T2 write.
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return toIdle ? (owner != 0 ? .idleOwned : .idleRelease) : .requeue }
            current = original
        }
    }

    /// An owner took one retain of the unit and keeps it until ``ownerLeaves()``: sets O.
    /// Only on a fresh unit no other thread can reach (an actor cell being registered),
    /// and at most once: O then exists before the first T1, and entries never mix
    /// retained and unretained for one unit (L1).
    @inlinable package func ownerArrives() {
        let (exchanged, original) = state.compareExchange(
            expected: ScheduledUnit.idle, desired: ScheduledUnit.owner, ordering: .acquiringAndReleasing)
        if _slowPath(!exchanged) { ScheduledUnit.ownerArrivedTwice(original) }
    }

    @usableFromInline @inline(never)
    static func ownerArrivedTwice(_ original: UInt8) -> Never {
        preconditionFailure("ScheduledUnit.ownerArrives: the unit is in state \(original), not a fresh idle unit without an owner")
    }

    /// The owner gives up the retain it held (L4): clears O. Returns true
    /// when the unit was idle — the caller must then release its retain itself (after this
    /// returns; the unit may be freed by it); false when the retain was handed to the entry
    /// or runner holding the unit (do not release it). Called at most once, after
    /// ``ownerArrives()``.
    package func ownerLeaves() -> Bool {
        var current = state.load(ordering: .relaxed)
        while true {
            precondition(current & ScheduledUnit.owner != 0, "ScheduledUnit.ownerLeaves: the owner bit is not set (left twice?)")
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current & ~ScheduledUnit.owner, ordering: .acquiringAndReleasing)
            if exchanged { return current & ScheduledUnit.runMask == ScheduledUnit.idle }
            current = original
        }
    }

    /// The current run state (idle, scheduled, running, notified), for tests and
    /// diagnostics (a snapshot; O masked off).
    @inlinable package var stateSnapshot: UInt8 { state.load(ordering: .acquiring) & ScheduledUnit.runMask }
}
