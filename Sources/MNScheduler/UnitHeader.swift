// UnitHeader: the scheduler's part of anything it runs one turn at a time (an actor cell, a
// native actor's executor, a lane of task jobs). The argument for each rule and ordering:
// MNScheduler.docc/SchedulerProtocols.md. Model: Models/scheduled_unit.pml.
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
// Lifetime: an entry is the unit's object address; it holds a retain only when no owner does.
//   (L1) While not idle, exactly one scheduler-side retain: the owner's if O is set,
//        else the entry's. While idle: the owner's if O is set, else none.
//   (L2) T1's winner retains exactly when its CAS read O clear.
//   (L3) A runner whose T4 read O clear releases; one that read O set never touches
//        the unit again; T5 re-queues the entry as it is.
//   (L4) ownerLeaves clears O: on an idle unit the owner releases; otherwise its retain
//        passes to the entry or runner.
//
// Placement: (H1) the header is its unit class's first stored property, so it lies two
// words into the object and an entry alone reaches it (`at`). The worker calls the turn
// the header keeps: the unit's own (UnitTurn.swift), or one that dispatches on the kind
// byte (UnitKind.swift). Tests check H1 for every unit type (`headerIsPlaced`).
//
// Orderings: every write of the word is an acquire-release RMW, but `ownerArrives`, a
// store to a unit no other thread can reach yet: whatever later publishes the unit (a
// lock's release, T1's RMW) orders it. A producer that enqueued and fenced may read the
// word with a plain load (`isDue`, "Due units").

import Synchronization

/// The scheduler's state for one unit: the turn a worker calls (its own, or one through its
/// kind), then its state word and its kind, two bytes, which a subclass's small fields may
/// follow in the same word.
///
/// A ``ScheduledUnit`` stores it as its class's first stored property, in a `let`, and
/// never moves it. Thread-safety: every transition is atomic; see the file's rules.
@frozen
public struct UnitHeader: ~Copyable, Sendable {
    @usableFromInline package static let idle: UInt8 = 0
    @usableFromInline static let scheduled: UInt8 = 1
    @usableFromInline static let running: UInt8 = 2
    @usableFromInline static let notified: UInt8 = 3
    /// The run-state bits (idle, scheduled, running, notified).
    @usableFromInline static let runMask: UInt8 = 3
    /// O: an owner holds a retain that keeps the unit alive (L1–L4).
    @usableFromInline static let owner: UInt8 = 4

    /// The turn the worker calls: the unit's own, or `UnitTurnCode.throughKind`. Immutable,
    /// so published with the unit.
    @usableFromInline package let turnCode: UnitTurnCode

    /// The state word: run state and O. Every write but `ownerArrives` is an acquire-release
    /// RMW (the file's "Orderings").
    @usableFromInline let state: Atomic<UInt8>

    /// The unit's type: for a turn through the kind, the after-shutdown hook and the unit
    /// as a reference.
    @usableFromInline let kind: UnitKind

    /// An idle unit without an owner (queue entries hold its retains), of `kind`. The
    /// worker runs its turns through `turn` when it captures nothing (`UnitTurnCode`),
    /// else through `kind`.
    @inlinable public init(kind: UnitKind, turn: UnitTurn? = nil) {
        // `if let`, not `flatMap`: a generic call would re-abstract the closure, giving it
        // a context in unoptimised builds.
        if let turn, let code = UnitTurnCode(turn) { turnCode = code } else { turnCode = UnitTurnCode.throughKind }
        state = Atomic(UnitHeader.idle)
        self.kind = kind
    }

    /// True when the worker calls the unit's own turn, not its kind's.
    @inlinable package var keepsOwnTurn: Bool { turnCode != UnitTurnCode.throughKind }

    /// The header of the unit whose object is at `entry` (H1).
    @inlinable @inline(__always)
    package static func at(_ entry: UnsafeMutableRawPointer) -> UnsafeMutablePointer<UnitHeader> {
        (entry + 2 * MemoryLayout<UInt>.size).assumingMemoryBound(to: UnitHeader.self)
    }

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
        let guess = expectingOwner ? UnitHeader.owner : UnitHeader.idle
        let (won, seen) = state.compareExchange(
            expected: guess, desired: guess | UnitHeader.scheduled, ordering: .acquiringAndReleasing)
        if won { return expectingOwner ? .pushUnretained : .pushRetained }
        return transitionToScheduledSlow(seen)
    }

    /// transitionToScheduled's first CAS alone, for a fast path that keeps the loop out of
    /// line. Returns what the CAS read: the guess iff it won T1 (L2); else nothing changed
    /// and the caller calls `transitionToScheduledSlow(seen)`.
    @inlinable @inline(__always)
    package func transitionToScheduledBlind(expectingOwner: Bool) -> UInt8 {
        let guess = expectingOwner ? UnitHeader.owner : UnitHeader.idle
        return state.compareExchange(
            expected: guess, desired: guess | UnitHeader.scheduled, ordering: .acquiringAndReleasing).original
    }

    /// The loop of transitionToScheduled: `seen` is what the blind CAS read.
    @usableFromInline @inline(never)
    package func transitionToScheduledSlow(_ seen: UInt8) -> ScheduleClaim {
        var current = seen
        while true {
            let owner = current & UnitHeader.owner
            let desired: UInt8
            switch current & UnitHeader.runMask {
            case UnitHeader.idle: desired = owner | UnitHeader.scheduled
            case UnitHeader.running: desired = owner | UnitHeader.notified
            // Write the same value back: the worker's next RMW reads from it (R3).
            default: desired = current
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged {
                guard current & UnitHeader.runMask == UnitHeader.idle else { return .none }
                return owner != 0 ? .pushUnretained : .pushRetained
            }
            current = original
        }
    }

    /// T1/T2 for the unit whose object is at `entry`: on winning T1, the entry to push,
    /// retained iff O was clear (L2); else nil.
    @inlinable @inline(__always)
    package func claimEntry(_ entry: UnsafeMutableRawPointer, expectingOwner: Bool) -> UnsafeMutableRawPointer? {
        switch transitionToScheduled(expectingOwner: expectingOwner) {
        case .none: return nil
        case .pushUnretained: return entry
        case .pushRetained:
            _ = Unmanaged<AnyObject>.fromOpaque(entry).retain()
            return entry
        }
    }

    /// True when a turn is due, by one plain load, for a caller that published and fenced
    /// ("Due units").
    @inlinable @inline(__always)
    package var isDue: Bool { state.load(ordering: .relaxed) & UnitHeader.scheduled != 0 }

    /// True while a turn runs (a snapshot).
    @inlinable package var isInTurn: Bool { state.load(ordering: .relaxed) & UnitHeader.running != 0 }

    /// T3: the popping runner starts its turn. Returns O, for transitionAfterTurn.
    @inlinable @inline(__always)
    package func transitionToRunning() -> UInt8 {
        let original = state.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        #if !arch(x86_64)
        // The turn's store→load barrier after T3 ("Due units"); on x86-64 the xadd is one.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        #endif
        precondition(original & UnitHeader.runMask == UnitHeader.scheduled,
                     "unit popped from a run queue in state \(original), not scheduled: queued twice?")
        return original & UnitHeader.owner
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
        let expected = UnitHeader.running | owner
        if outcome == .idle {
            let (exchanged, original) = state.compareExchange(
                expected: expected, desired: owner, ordering: .acquiringAndReleasing)
            if exchanged { return owner != 0 ? .idleOwned : .idleRelease }
            return transitionAfterTurnSlow(.idle, seen: original)
        }
        let (exchanged, original) = state.compareExchange(
            expected: expected, desired: owner | UnitHeader.scheduled, ordering: .acquiringAndReleasing)
        if exchanged { return .requeue }
        return transitionAfterTurnSlow(.more, seen: original)
    }

    /// transitionAfterTurn after its first CAS failed (T2 came, or O was cleared).
    @usableFromInline @inline(never)
    package func transitionAfterTurnSlow(_ outcome: TurnOutcome, seen: UInt8) -> AfterTurn {
        if seen & UnitHeader.runMask == UnitHeader.notified {
            // T5 from notified: only this runner leaves it. An RMW, to acquire the T2 write.
            state.wrappingSubtract(UnitHeader.running, ordering: .acquiringAndReleasing)
            return .requeue
        }
        var current = seen
        while true {
            let owner = current & UnitHeader.owner
            let toIdle = outcome == .idle && current & UnitHeader.runMask == UnitHeader.running
            let desired = toIdle ? owner : owner | UnitHeader.scheduled
            // A CAS, not a store: it acquires a producer's T2 write.
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return toIdle ? (owner != 0 ? .idleOwned : .idleRelease) : .requeue }
            current = original
        }
    }

    /// An owner took one retain and keeps it until ``ownerLeaves()``: sets O. At most once,
    /// on a fresh unit no other thread can reach, so O exists before the first T1 (L1).
    /// A store, not an RMW: no other thread can reach the unit yet (the file's "Orderings").
    @inlinable package func ownerArrives() {
        let original = state.load(ordering: .relaxed)
        if _slowPath(original != UnitHeader.idle) { UnitHeader.ownerArrivedTwice(original) }
        state.store(UnitHeader.owner, ordering: .releasing)
    }

    @usableFromInline @inline(never)
    static func ownerArrivedTwice(_ original: UInt8) -> Never {
        preconditionFailure("UnitHeader.ownerArrives: the unit is in state \(original), not a fresh idle unit without an owner")
    }

    /// The owner gives up its retain (L4). True: the unit was idle and the caller releases
    /// it after this returns; false: the retain passed to the entry or runner.
    package func ownerLeaves() -> Bool {
        var current = state.load(ordering: .relaxed)
        while true {
            precondition(current & UnitHeader.owner != 0, "UnitHeader.ownerLeaves: the owner bit is not set (left twice?)")
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current & ~UnitHeader.owner, ordering: .acquiringAndReleasing)
            if exchanged { return current & UnitHeader.runMask == UnitHeader.idle }
            current = original
        }
    }

    /// The current run state, O masked off (a snapshot, for tests and diagnostics).
    @inlinable package var stateSnapshot: UInt8 { state.load(ordering: .acquiring) & UnitHeader.runMask }
}

extension ScheduledUnit {
    /// True when `unitHeader` lies where the scheduler looks for it (H1). For tests.
    package var headerIsPlaced: Bool {
        withUnsafePointer(to: unitHeader) { UnsafeRawPointer($0) } == UnsafeRawPointer(UnitHeader.at(entry))
    }
}
