// UnitKind: the type of a scheduled unit, as one byte in its header, and the table a turn
// through the kind dispatches on (for a unit with no turn of its own, UnitTurn.swift). A
// kind is registered once per unit type, under a lock, before any unit of it exists, and
// never removed. Why a turn then reads a complete entry without a lock:
// MNScheduler.docc/SchedulerProtocols.md, "The unit's header and kind".

import Synchronization

/// The type of a ``ScheduledUnit``, registered once: how a worker runs its turns.
///
/// Thread-safety: ``register(_:runTurn:)`` from any thread; at most 255 kinds per process.
@frozen
public struct UnitKind: Sendable, Equatable {
    /// The index in the tables.
    @usableFromInline let index: UInt8

    @inlinable init(index: UInt8) { self.index = index }

    /// A turn of the unit whose object is at the first argument, with that budget and the
    /// worker's `LingerPermit.worker` (nil: never linger); returns the `TurnOutcome`'s raw
    /// value. A C function, so a worker calls it directly.
    public typealias TurnFunction = @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutableRawPointer?) -> UInt8

    /// Registers `U` and returns its kind. Call it once per type and keep the result in a
    /// `static let`: each call adds a kind. `runTurn`, written for the concrete type (for
    /// example `{ unit, budget, _ in Unmanaged<U>.fromOpaque(unit)._withUnsafeGuaranteedRef { $0.runTurn(budget: budget) }.rawValue }`),
    /// is what a turn through the kind calls; without it, one more closure. A unit whose
    /// header keeps its own turn (``UnitHeader/init(kind:turn:)``) skips both.
    @inlinable @inline(__always)
    public static func register<U: ScheduledUnit>(_: U.Type, runTurn: TurnFunction? = nil) -> UnitKind {
        // Specialised where `U` is concrete: the closures then capture nothing.
        add(Entry(
            runTurn: { entry, budget in Unmanaged<U>.fromOpaque(entry)._withUnsafeGuaranteedRef { $0.runTurn(budget: budget) } },
            runAfterShutdown: { entry in Unmanaged<U>.fromOpaque(entry)._withUnsafeGuaranteedRef { $0.runAfterShutdown() } },
            unit: { entry in Unmanaged<U>.fromOpaque(entry).takeUnretainedValue() }), turn: runTurn)
    }

    /// What the scheduler does with a unit of one kind, given its object's address.
    @usableFromInline
    final class Entry: Sendable {
        let runTurn: @Sendable (UnsafeMutableRawPointer, Int) -> TurnOutcome
        let runAfterShutdown: @Sendable (UnsafeMutableRawPointer) -> Void
        let unit: @Sendable (UnsafeMutableRawPointer) -> any ScheduledUnit

        @usableFromInline
        init(runTurn: @escaping @Sendable (UnsafeMutableRawPointer, Int) -> TurnOutcome,
             runAfterShutdown: @escaping @Sendable (UnsafeMutableRawPointer) -> Void,
             unit: @escaping @Sendable (UnsafeMutableRawPointer) -> any ScheduledUnit) {
            self.runTurn = runTurn
            self.runAfterShutdown = runAfterShutdown
            self.unit = unit
        }
    }

    /// Registered kinds, in order; the tables below are filled under this lock.
    private static let registered = Lock<Int>(0)

    /// One slot per kind: an `Entry`, retained forever, or nil.
    nonisolated(unsafe) static let table: UnsafeMutablePointer<Unmanaged<Entry>?> = {
        let table = UnsafeMutablePointer<Unmanaged<Entry>?>.allocate(capacity: 256)
        table.initialize(repeating: nil, count: 256)
        return table
    }()

    /// One slot per kind: the turn function a worker calls (the kind's own, or `throughEntry`).
    nonisolated(unsafe) static let turns: UnsafeMutablePointer<TurnFunction?> = {
        let turns = UnsafeMutablePointer<TurnFunction?>.allocate(capacity: 256)
        turns.initialize(repeating: nil, count: 256)
        return turns
    }()

    @usableFromInline
    static func add(_ entry: Entry, turn: TurnFunction?) -> UnitKind {
        let index = registered.withLock { count -> Int in
            precondition(count < 255, "UnitKind.register: more than 255 unit types; register each type once, in a static let")
            table[count] = Unmanaged.passRetained(entry)
            turns[count] = turn ?? throughEntry
            count += 1
            return count - 1
        }
        return UnitKind(index: UInt8(truncatingIfNeeded: index))
    }

    /// The turn of a kind registered without a turn function: through its entry's closure.
    private static let throughEntry: TurnFunction = { entry, budget, _ in
        UnitKind.entry(UnitHeader.at(entry).pointee.kind, in: table)._withUnsafeGuaranteedRef {
            $0.runTurn(entry, budget).rawValue
        }
    }

    /// The kind's entry (registered before any unit of it exists).
    @inline(__always)
    static func entry(_ kind: UnitKind, in table: UnsafeMutablePointer<Unmanaged<Entry>?>) -> Unmanaged<Entry> {
        table[Int(kind.index)].unsafelyUnwrapped
    }

    /// Runs one turn of the unit at `entry`: the turn its header keeps, its own or
    /// `UnitTurnCode.throughKind`.
    @inline(__always)
    static func runTurn(_ entry: UnsafeMutableRawPointer, budget: Int, lingering: LingerPermit,
                        header: UnsafeMutablePointer<UnitHeader>) -> TurnOutcome {
        let turn = header.pointee.turnCode.turn
        return Unmanaged<AnyObject>.fromOpaque(entry)._withUnsafeGuaranteedRef { turn($0, budget, lingering) }
    }

    /// A turn through the kind's table: for a unit with no turn of its own.
    static func runTurnThroughKind(_ unit: AnyObject, budget: Int, lingering: LingerPermit) -> TurnOutcome {
        let entry = Unmanaged.passUnretained(unit).toOpaque()
        let function = turns[Int(UnitHeader.at(entry).pointee.kind.index)].unsafelyUnwrapped
        return TurnOutcome(rawValue: function(entry, budget, lingering.worker)).unsafelyUnwrapped
    }

    /// The unit at `entry`, as a strong reference.
    static func unit(at entry: UnsafeMutableRawPointer) -> any ScheduledUnit {
        UnitKind.entry(UnitHeader.at(entry).pointee.kind, in: table)._withUnsafeGuaranteedRef { $0.unit(entry) }
    }

    /// Runs the after-shutdown hook of the unit at `entry`.
    static func runAfterShutdown(_ entry: UnsafeMutableRawPointer) {
        UnitKind.entry(UnitHeader.at(entry).pointee.kind, in: table)._withUnsafeGuaranteedRef { $0.runAfterShutdown(entry) }
    }
}
