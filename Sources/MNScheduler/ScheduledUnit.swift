// ScheduledUnit — anything the M:N scheduler runs one turn at a time (an actor with
// messages, a native actor's job queue, a lane of task jobs).
// model: Models/scheduled_unit.pml (spin; scripts/model-check.sh checks it, Models/README.md)
//
// ## The state word
// Each unit carries one atomic byte, `state`: two bits of run state with four values,
//
//   idle       not queued, not running. The only state from which a unit is queued.
//   scheduled  in exactly one run queue / next slot / injection queue; a worker will run it.
//   running    a worker is inside runTurn.
//   notified   running, and schedule() was called during the turn: run it again after.
//
// and the owner bit O (see Lifetime below). Every transition preserves O; only `ownerLeaves`
// changes it (set → clear, once).
//
// Transitions (who performs each, in parentheses):
//   (T1) idle      → scheduled  schedule(): CAS. The winner (and only the winner) pushes an
//                               entry for the unit onto a queue; the CAS returns O, which
//                               says whether that entry holds a retain (Lifetime).
//   (T2) running   → notified   schedule(): CAS. Nothing is pushed; the worker re-queues.
//   (T3) scheduled → running    the worker that popped the unit: a fetch-add (it is the only
//                               holder of the entry, so nobody else can move it out of
//                               scheduled; the old value doubles as a "queued twice" check,
//                               and tells the worker O).
//   (T4) running   → idle       worker after a turn that returned .idle: CAS from
//                               running|O-as-T3-read; retried if only O changed meanwhile.
//                               What it read of O decides the release (Lifetime).
//   (T5) running|notified → scheduled  worker after a turn that returned .more (CAS), or
//                               whose T4 CAS failed because of T2 (from notified: a
//                               fetch-subtract of 2, O untouched); the worker re-queues
//                               the entry it holds.
//   schedule() on scheduled or notified changes nothing (the pending run will see the new
//   work; see Orderings for why it still writes the word).
//   After the scheduler shut down, a unit that would be queued goes through the same T1,
//   T3 and T4/T5 transitions around `runAfterShutdown()` instead of `runTurn` (see
//   "After close" in Scheduler.swift), so R1–R3 and L1–L4 hold for it too.
//
// Rules that follow:
//   (R1) never queued twice: only T1 pushes, and T1 needs idle; idle is left only by T1.
//   (R2) never on two workers at once: only T3 enters running, from scheduled, which is
//        held by one queue entry; the next T1 needs idle, reached only after the turn (T4).
//   (R3) no missed work: a producer makes its work visible, then calls schedule(). If the
//        unit is running, T2 records it and T4 fails, so T5 re-queues it; if the turn
//        already ended with T4, the producer's T1 succeeds and queues it. Either way a
//        turn starts after the work was published.
//
// ## Lifetime: who holds the unit alive (issue 9, items 3/4)
// A queue entry is a raw pointer. It holds a retain only when no owner does:
//   O set    an owner (FastMailbox's registry, CellTable) holds one retain that keeps the
//            unit alive; entries hold none. Set by `ownerArrives()` when the owner takes
//            its retain, which must happen before anything can schedule the unit (a cell
//            is registered before spawn schedules it or hands out its ref), so O is there
//            before the first T1. A cell whose registration fails never gets O. Set once,
//            cleared at most once (`ownerLeaves()`), never set again.
//   O clear  no owner: the entry (or the worker / abandoner holding the popped entry)
//            holds one retain. MNSerialExecutor and MNTaskExecutor lanes never set O.
// Invariant (L1): while the unit is not idle, exactly one scheduler-side retain exists —
// the owner's if O is set, else the entry's; while it is idle, the owner's if O is set,
// else none. So:
//   (L2) T1: the winner retains (Unmanaged.passRetained) iff the CAS read O clear; it holds
//        its own reference to the unit meanwhile (a caller of schedule() must). Entries
//        re-queued by T5 are carried as they are (still owned as O says).
//   (L3) after the turn, the runner (Worker.runUnit, SchedulerCore.abandon,
//        DeterministicEngine) learns O from its T4/T5 CAS: T4 read O clear → it owns a
//        retain and releases it; T4 read O set → it owns nothing and must not touch the
//        unit again (the owner may free it at once: no metrics, no currentUnit read
//        through it, no hand-over); T5 → it re-queues the entry it holds.
//   (L4) `ownerLeaves()` (the owner gives up its retain: the cell's final turn
//        deregistering it, shutdown's removeAll) clears O with a CAS. If the unit was idle,
//        no entry exists: the owner releases its retain. Otherwise the retain is handed
//        over, not released: the entry, or the runner holding it, now owns it, and its T4
//        reads O clear (L3). The final turn clears O on a worker that popped an unretained
//        entry; from that CAS on the worker owns a retain, so the cell stays alive to the
//        end of the turn and the worker's T4 releases it.
// Why it pays: an actor cell is registered while it lives, so a message's schedule() and
// turn cost no retain/release (two atomic RMWs on the cell's header line) — only the
// state-word RMWs they needed anyway.
//
// ## Orderings (x86 and ARM)
// Every RMW on the word is acquiring-and-releasing (C11 RMWs on one location are totally
// ordered, so each reads the latest value), so the turn's writes happen-before the next
// schedule() that observes idle, and a producer's writes happen-before the turn that
// follows its T2 (the queue push/pop adds its own release/acquire edge on top). schedule()
// on scheduled/notified also writes the word (a CAS to the same value) for the same reason:
// the worker's next T3/T4 RMW reads from that write, so the producer's work is visible to
// the turn it relies on; a plain load would leave a store-buffer window (Dekker).
// Due units: a producer whose work is an enqueue into a queue this unit drains, followed
// by a seq_cst fence (MPSCQueue's enqueue makes one: "Who runs the consumer", "The unit as
// the idle flag"), may read the word with a plain load and leave a unit it finds scheduled
// or notified alone (`isDue`, read by MPSCQueue.claimConsumer): no RMW. Why
// the turn that is due still sees the work: every turn begins with T3 and then a seq_cst
// fence (the locked xadd on x86-64; `dmb ish` after it on AArch64, transitionToRunning)
// before it reads the queue. The producer's load read a value that T3's write follows in
// the word's order (scheduled and notified are left only through T3, or T5 then T3). Had
// T3's fence come before the producer's fence in the fences' total order, the producer's
// load would have had to see T3's write or a later one; so the producer's fence comes
// first, and the turn's reads after its own fence see everything before it: the enqueue.
// A producer that finds the unit idle or running makes T1 or T2 as before (R3).
// Lifetime: a release (swift_release: a releasing decrement, the last one acquiring before
// deinit) happens after the releaser's RMW on the word, which read-from (or follows in the
// word's order) every earlier turn's T4 and the owner's clear, so the deinit sees the last
// turn's writes. A runner whose T4 read O set does no access after that RMW, so the owner's
// later clear-and-release (which reads from that T4) cannot free memory the runner still
// uses.

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
    /// The run-state bits (idle, scheduled, running, notified).
    @usableFromInline static let runMask: UInt8 = 3
    /// O: an owner holds a retain that keeps the unit alive (file comment, Lifetime).
    @usableFromInline static let owner: UInt8 = 4

    /// The state word: run state and O. Written by schedule() (T1, T2 from any thread), by
    /// the runner that holds the unit (T3, T4, T5) and by its owner (ownerLeaves); every
    /// write is an RMW with acquire-release ordering, see the file comment.
    @usableFromInline let state: Atomic<UInt8>

    /// A unit without an owner (queue entries hold its retains; file comment, Lifetime),
    /// idle.
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
    /// For a schedule() fast path that keeps the loop out of line (SchedulerGate.scheduleOwned).
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
            // scheduled or notified: a run is already due. Still write the word (same value):
            // a read alone would not order the caller's work before that run (R3), since
            // the caller's earlier stores may not be visible yet; a release RMW does, because
            // the worker's next RMW on the word reads from it.
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
    /// caller that published its work and then fenced (file comment, Orderings, "Due units").
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

    /// What the runner holds after T4/T5 (file comment, L3).
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
            return transitionAfterTurnSlow(.idle, seen: original)  // out of line: keeps the worker's loop small
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
            // T5 from notified (a T2 came): only this runner moves the unit out of notified
            // (a T2 on notified rewrites it, ownerLeaves changes only O), so notified − 2 =
            // scheduled is T5 whatever O is by now, in one RMW. An RMW, not a store: it
            // reads (acquires) a producer's T2 write, so that producer's work is visible to
            // whoever runs the next turn.
            state.wrappingSubtract(ScheduledUnit.running, ordering: .acquiringAndReleasing)
            return .requeue
        }
        var current = seen
        while true {
            let owner = current & ScheduledUnit.owner
            // T4 only from running (notified: a schedule() came, T5 instead, R3).
            let toIdle = outcome == .idle && current & ScheduledUnit.runMask == ScheduledUnit.running
            let desired = toIdle ? owner : owner | ScheduledUnit.scheduled
            // A CAS, not a store: it reads (acquires) a producer's T2 write, so that
            // producer's work is visible to whoever runs the next turn.
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return toIdle ? (owner != 0 ? .idleOwned : .idleRelease) : .requeue }
            current = original
        }
    }

    /// An owner took one retain of the unit and keeps it until ``ownerLeaves()``: sets O
    /// (file comment, Lifetime). Only on a unit no scheduler has seen yet — idle, never
    /// scheduled, not reachable by another thread (an actor cell being registered, before
    /// spawn schedules it or returns its ref) — and at most once: O then exists before the
    /// first T1, and entries never mix retained and unretained for one unit (L1).
    /// Inlinable (its failure out of line): the registry's insert of every spawn calls it.
    @inlinable package func ownerArrives() {
        let (exchanged, original) = state.compareExchange(
            expected: ScheduledUnit.idle, desired: ScheduledUnit.owner, ordering: .acquiringAndReleasing)
        if _slowPath(!exchanged) { ScheduledUnit.ownerArrivedTwice(original) }
    }

    @usableFromInline @inline(never)
    static func ownerArrivedTwice(_ original: UInt8) -> Never {
        preconditionFailure("ScheduledUnit.ownerArrives: the unit is in state \(original), not a fresh idle unit without an owner")
    }

    /// The owner gives up the retain it held (file comment, L4): clears O. Returns true
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
