// ScheduledUnit: what the M:N scheduler runs one turn at a time. A unit is a class that
// stores a UnitHeader as its first stored property (H1, UnitHeader.swift) and registers
// its type once as a UnitKind; the scheduler reaches the header from the object's address
// and runs the turn the header keeps: the unit's own (UnitTurn.swift), or one through the
// kind. Nothing inherits from a scheduler class.

/// What a turn left behind: whether the unit goes idle or back into the run queue.
public enum TurnOutcome: UInt8, Sendable {
    /// No work left: the unit goes idle; a later `schedule` makes it runnable again.
    case idle
    /// Work remains: the unit goes to the back of the run queue.
    case more
}

/// Anything the scheduler runs one turn at a time.
///
/// Conform a class whose first stored property is `let unitHeader = UnitHeader(kind:)`,
/// with the kind from ``UnitKind/register(_:runTurn:)``, made once per type in a
/// `static let`. Thread-safety: `Scheduler.schedule(_:guessing:)` may be called for the same unit
/// from any number of threads at once; ``runTurn(budget:)`` never runs concurrently with
/// itself, and a `schedule` during a turn causes another turn. A unit is scheduled on one
/// scheduler at a time.
public protocol ScheduledUnit: AnyObject, Sendable {
    /// The scheduler's state for this unit: the class's first stored property, a `let`.
    var unitHeader: UnitHeader { get }

    /// Called on a worker, never concurrently with itself. Process at most `budget` items.
    /// Return `.idle` when no work is left, `.more` to be re-queued at the back of the run
    /// queue.
    func runTurn(budget: Int) -> TurnOutcome

    /// Called instead of `runTurn` once the unit's scheduler has shut down, never
    /// concurrently with a turn or itself; again if the unit is scheduled while it runs.
    /// Move or report pending work here.
    func runAfterShutdown()
}

extension ScheduledUnit {
    /// The unit's object address: what a run queue holds (unretained here).
    @inlinable @inline(__always)
    package var entry: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// True while a turn runs (a snapshot).
    @inlinable package var isInTurn: Bool { unitHeader.isInTurn }

    /// The current run state, O masked off (a snapshot, for tests and diagnostics).
    @inlinable package var stateSnapshot: UInt8 { unitHeader.stateSnapshot }
}
