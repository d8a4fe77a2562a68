// DeterministicEngine: the state behind a DeterministicScheduler: the runnable units, the
// seeded choice of the next one, the drive guard and the virtual clock. The scheduler's
// gate hands it every schedule() (on the outside path only).
//
// Invariants:
//  (D1) A unit is in `runnable` at most once, exactly while its state word is `scheduled`:
//       only T1 winners and T5 re-queues append (R1), only a turn removes.
//  (D2) At most one drive runs at a time: `driving` is taken with an exchange, and a
//       second caller is refused (AlreadyDriving), never a trap or deadlock. So turns never
//       overlap (R2).
//  (D3) The next unit depends only on the seed and the order units became runnable: with
//       all scheduling on the driving thread, the same seed runs the same turns.
//  (D4) Once `closed` (set under the lock), nothing is appended: late work goes through
//       `runAfterShutdown`, as on the real scheduler.
//  (D5) `runnable` holds run-queue entries, retained iff no owner, settled after the turn
//       as a worker settles them (L1–L4).
// Thread-safety: schedule() from any thread (the lock); drives as in D2.

import Synchronization

/// See the file comment.
package final class DeterministicEngine: Sendable {
    package let seed: UInt64
    /// Items per turn (`runTurn(budget:)`).
    package let throughput: Int
    package let clock = VirtualClock()

    /// beginDrive's refusal: another drive holds the guard (D2).
    package struct AlreadyDriving: Error {}

    private struct State {
        /// Entries (D5), in the order they became runnable.
        var runnable: [UnsafeMutableRawPointer] = []
        var random: SplitMix64
        var closed = false
        var turns = 0
    }

    private let state: Lock<State>
    /// D2's guard.
    private let driving = Atomic<Bool>(false)

    package init(seed: UInt64, throughput: Int) {
        self.seed = seed
        self.throughput = throughput
        state = Lock(State(random: SplitMix64(seed: seed)))
    }

    // MARK: scheduling (any thread)

    /// Scheduler.schedule here: T1/T2, then the runnable list; once closed, D4.
    package func schedule(_ unit: UnsafeMutableRawPointer) {
        let header = UnitHeader.at(unit)
        let accepted = state.withLock { state -> Bool in
            if state.closed { return false }
            if let entry = header.pointee.claimEntry(unit, expectingOwner: false) { state.runnable.append(entry) }
            return true
        }
        if !accepted, let entry = header.pointee.claimEntry(unit, expectingOwner: false) { SchedulerCore.abandon(entry) }
    }

    /// Units waiting for a turn (a snapshot).
    package var runnableCount: Int { state.withLock { $0.runnable.count } }

    /// Turns run so far.
    package var turns: Int { state.withLock { $0.turns } }

    // MARK: driving (one drive at a time, D2)

    /// Takes the drive guard and makes the virtual clock this thread's turn clock.
    /// Throws `AlreadyDriving` when the guard is taken (D2).
    package func beginDrive() throws(AlreadyDriving) -> UnsafeMutableRawPointer? {
        if driving.exchange(true, ordering: .acquiringAndReleasing) { throw AlreadyDriving() }
        return SchedulerClock.setCurrentTurn(clock)
    }

    /// Releases what beginDrive took.
    package func endDrive(_ previous: UnsafeMutableRawPointer?) {
        SchedulerClock.restoreCurrentTurn(previous)
        driving.store(false, ordering: .releasing)
    }

    /// One turn of a unit chosen with the seeded generator; false when none is runnable.
    /// The caller holds the drive guard.
    package func runOneTurn() -> Bool {
        let next: UnsafeMutableRawPointer? = state.withLock { state in
            guard !state.runnable.isEmpty else { return nil }
            let index = state.random.next(below: state.runnable.count)
            state.turns += 1
            return state.runnable.remove(at: index)  // keeps the others' order (D3)
        }
        guard let entry = next else { return false }
        let header = UnitHeader.at(entry)
        let owner = header.pointee.transitionToRunning()
        let outcome = UnitKind.runTurn(entry, budget: throughput, lingering: .never, header: header)
        let after = header.pointee.transitionAfterTurn(outcome, owner: owner)
        switch after {
        case .requeue:
            let kept = state.withLock { state -> Bool in
                if state.closed { return false }
                state.runnable.append(entry)
                return true
            }
            if !kept { SchedulerCore.abandon(entry) }
        case .idleRelease:
            Unmanaged<AnyObject>.fromOpaque(entry).release()  // D5: the entry's retain
        case .idleOwned:
            break  // its owner keeps it alive; not touched again (L3)
        }
        return true
    }

    /// Turns until nothing is runnable or `maxTurns` ran. The caller holds the drive guard.
    package func runTurns(maxTurns: Int) -> (turns: Int, quiescent: Bool) {
        var count = 0
        while count < maxTurns {
            guard runOneTurn() else { return (count, true) }
            count += 1
        }
        return (count, runnableCount == 0)
    }

    /// The actor system's shutdown drive: false when the guard was taken or it did not quiesce.
    package func driveForShutdown(maxTurns: Int) -> Bool {
        let previous: UnsafeMutableRawPointer?
        do { previous = try beginDrive() } catch { return false }  // (not `try?`: nil is a valid previous clock)
        defer { endDrive(previous) }
        return runTurns(maxTurns: maxTurns).quiescent
    }

    // MARK: shutdown

    /// Scheduler.shutdown here: closes (D4), runs every runnable unit's after-shutdown hook in
    /// list order, and returns them. Idempotent.
    func shutdown(core: SchedulerCore) -> [any ScheduledUnit] {
        core.closed.store(true, ordering: .sequentiallyConsistent)
        let taken: [UnsafeMutableRawPointer]? = state.withLock { state in
            if state.closed { return nil }
            state.closed = true
            defer { state.runnable = [] }
            return state.runnable
        }
        guard let taken else { return [] }
        core.late.withLock { $0.handBackDone = true }  // nothing uses the late list here; kept consistent
        var units: [any ScheduledUnit] = []
        units.reserveCapacity(taken.count)
        for entry in taken {
            units.append(UnitKind.unit(at: entry))  // a strong reference first
            SchedulerCore.abandon(entry)
        }
        return units
    }
}
