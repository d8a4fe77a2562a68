// ScheduledUnit: anything the M:N scheduler runs one turn at a time (an actor with
// messages, a native actor's job queue, a lane of task jobs). The argument for each rule
// and ordering: MNScheduler.docc/SchedulerProtocols.md. Model: Models/scheduled_unit.pml.
//
// The state word: one atomic byte, two bits of run state and the owner bit O.
//   idle       not queued, not running. The only state from which a unit is queued.
//   scheduled  in exactly one run queue, next slot or injection queue.
//   running    a worker is inside runTurn.
//   notified   running, and schedule() came during the turn: run it again after.
//
// Transitions:
//   (T1) idle → scheduled        schedule(), CAS. Only the winner pushes an entry.
//   (T2) running → notified      schedule(), CAS. Nothing is pushed.
//   (T3) scheduled → running     the worker that popped it, fetch-add.
//   (T4) running → idle          the worker, after a turn that returned .idle (CAS).
//   (T5) running|notified → scheduled   the worker, after .more or a failed T4; re-queues.
//
// Rules:
//   (R1) Never queued twice.  (R2) Never on two workers at once.
//   (R3) No missed work: work published before schedule() is seen by a turn after it.
//
// Lifetime: an entry is a raw pointer; it holds a retain only when no owner does.
//   (L1) While not idle, exactly one scheduler-side retain: the owner's if O is set,
//        else the entry's. While idle: the owner's if O is set, else none.
//   (L2) T1's winner retains exactly when its CAS read O clear.
//   (L3) A runner whose T4 read O clear releases; one that read O set never touches
//        the unit again; T5 re-queues the entry as it is.
//   (L4) ownerLeaves clears O: on an idle unit the owner releases; otherwise its retain
//        passes to the entry or runner.
//
// Orderings: every write of the word is an acquire-release RMW. A producer that enqueued
// and fenced may read it with a plain load (`isDue`, "Due units").

import Synchronization

/// What a turn left behind: whether the unit goes idle or back into the run queue.
public enum TurnOutcome: Sendable {
    /// No work left: the unit goes idle; a later `schedule` makes it runnable again.
    case idle
    /// Work remains: the unit goes to the back of the run queue.
    case more
}

/// Base class of anything the scheduler runs one turn at a time. Holds the atomic state word.
///
/// Subclass it and override `runTurn(budget:)`. Thread-safety: `Scheduler.schedule(_:)`
/// may be called for the same unit from any number of threads at once; `runTurn` never
/// runs concurrently with itself, and a `schedule` during a turn causes another turn.
/// A unit is scheduled on one scheduler at a time.
open class ScheduledUnit: @unchecked Sendable {
    // @unchecked: the only shared mutable state is the Atomic `state`.

    @usableFromInline package static let idle: UInt8 = 0
    @usableFromInline static let scheduled: UInt8 = 1
    @usableFromInline static let running: UInt8 = 2
    @usableFromInline static let notified: UInt8 = 3
    /// The run-state bits (idle, scheduled, running, notified).
    @usableFromInline static let runMask: UInt8 = 3
    /// O: an owner holds a retain that keeps the unit alive (L1–L4).
    @usableFromInline static let owner: UInt8 = 4

    /// The state word: run state and O. Every write is an acquire-release RMW.
    @usableFromInline let state: Atomic<UInt8>

    /// An idle unit without an owner (queue entries hold its retains).
    public init() { state = Atomic(ScheduledUnit.idle) }

    /// Called on a worker, never concurrently with itself. Process at most `budget` items.
    /// Return `.idle` when no work is left, `.more` to be re-queued at the back of the run
    /// queue. The base implementation traps: a subclass must override it.
    open func runTurn(budget: Int) -> TurnOutcome {
        preconditionFailure("ScheduledUnit.runTurn(budget:) must be overridden by \(type(of: self))")
    }

    /// Called instead of `runTurn` once the unit's scheduler has shut down, never
    /// concurrently with a turn or itself; again if the unit is scheduled while it runs.
    /// Override it to move or report pending work; the base implementation does nothing.
    open func runAfterShutdown() {}

    // MARK: transitions

    /// What a T1/T2 attempt left the caller to do.
    @usableFromInline package enum ScheduleClaim {
        /// Nothing: the unit was already due or running (T2).
        case none
        /// Won T1; O was set: push an unretained entry.
        case pushUnretained
        /// Won T1; O was clear: push a retained entry.
        case pushRetained
    }

    /// T1/T2. `expectingOwner`, the caller's guess of O, is tried first: usually one CAS.
    @inlinable @inline(__always)
    package func transitionToScheduled(expectingOwner: Bool) -> ScheduleClaim {
        let guess = expectingOwner ? ScheduledUnit.owner : ScheduledUnit.idle
        let (won, seen) = state.compareExchange(
            expected: guess, desired: guess | ScheduledUnit.scheduled, ordering: .acquiringAndReleasing)
        if won { return expectingOwner ? .pushUnretained : .pushRetained }
        return transitionToScheduledSlow(seen)
    }

    /// transitionToScheduled's first CAS alone, for a fast path that keeps the loop out of
    /// line. Returns what the CAS read: the guess iff it won T1 (L2); else nothing changed
    /// and the caller calls `transitionToScheduledSlow(seen)`.
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
            // Write the same value back: the worker's next RMW reads from it (R3).
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

    /// T1/T2: on winning T1, the entry to push, retained iff O was clear (L2); else nil.
    @inlinable @inline(__always)
    package func claimEntry(expectingOwner: Bool) -> UnsafeMutableRawPointer? {
        switch transitionToScheduled(expectingOwner: expectingOwner) {
        case .none: return nil
        case .pushUnretained: return Unmanaged.passUnretained(self).toOpaque()
        case .pushRetained: return Unmanaged.passRetained(self).toOpaque()
        }
    }

    /// True when a turn is due, by one plain load, for a caller that published and fenced
    /// ("Due units").
    @inlinable @inline(__always)
    package final var isDue: Bool { state.load(ordering: .relaxed) & ScheduledUnit.scheduled != 0 }

    /// True while a turn runs (a snapshot).
    @inlinable package final var isInTurn: Bool { state.load(ordering: .relaxed) & ScheduledUnit.running != 0 }

    /// T3: the popping runner starts its turn. Returns O, for transitionAfterTurn.
    @inlinable @inline(__always)
    package func transitionToRunning() -> UInt8 {
        let original = state.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        #if !arch(x86_64)
        // The turn's store→load barrier after T3 ("Due units"); on x86-64 the xadd is one.
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
        /// T4 read O clear: the runner releases its retain and touches the unit no more.
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

    /// transitionAfterTurn after its first CAS failed (T2 came, or O was cleared).
    @usableFromInline @inline(never)
    package func transitionAfterTurnSlow(_ outcome: TurnOutcome, seen: UInt8) -> AfterTurn {
        if seen & ScheduledUnit.runMask == ScheduledUnit.notified {
            // T5 from notified: only this runner leaves it. An RMW, to acquire the T2 write.
            state.wrappingSubtract(ScheduledUnit.running, ordering: .acquiringAndReleasing)
            return .requeue
        }
        var current = seen
        while true {
            let owner = current & ScheduledUnit.owner
            let toIdle = outcome == .idle && current & ScheduledUnit.runMask == ScheduledUnit.running
            let desired = toIdle ? owner : owner | ScheduledUnit.scheduled
            // A CAS, not a store: it acquires a producer's T2 write.
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return toIdle ? (owner != 0 ? .idleOwned : .idleRelease) : .requeue }
            current = original
        }
    }

    /// An owner took one retain and keeps it until ``ownerLeaves()``: sets O. At most once,
    /// on a fresh unit no other thread can reach, so O exists before the first T1 (L1).
    @inlinable package func ownerArrives() {
        let (exchanged, original) = state.compareExchange(
            expected: ScheduledUnit.idle, desired: ScheduledUnit.owner, ordering: .acquiringAndReleasing)
        if _slowPath(!exchanged) { ScheduledUnit.ownerArrivedTwice(original) }
    }

    @usableFromInline @inline(never)
    static func ownerArrivedTwice(_ original: UInt8) -> Never {
        preconditionFailure("ScheduledUnit.ownerArrives: the unit is in state \(original), not a fresh idle unit without an owner")
    }

    /// The owner gives up its retain (L4). True: the unit was idle and the caller releases
    /// it after this returns; false: the retain passed to the entry or runner.
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

    /// The current run state, O masked off (a snapshot, for tests and diagnostics).
    @inlinable package var stateSnapshot: UInt8 { state.load(ordering: .acquiring) & ScheduledUnit.runMask }
}
