// UnitTurn: a unit's own turn function, kept in its header as one code pointer, so a worker
// calls it with no kind table, thunk or class dispatch in between.
//
// A Swift closure is two words: its code and its retained context, nil when it captures
// nothing. A closure compiled for a concrete type (specialised) captures nothing, so its
// code alone rebuilds it, and the header keeps no reference. A closure with a context
// (unspecialised code captures the generic metadata) is not kept: the unit's turns then go
// through its kind. The code only ever rebuilds the same closure type, so a signed code
// pointer (arm64e) stays valid.

/// A turn of `unit` (borrowed from the caller: no retain), with that budget and the
/// worker's lingering permit, as ``ScheduledUnit/runTurn(budget:)`` describes.
public typealias UnitTurn = (_ unit: AnyObject, _ budget: Int, _ lingering: LingerPermit) -> TurnOutcome

/// A ``UnitTurn`` that captures nothing, kept as its code alone.
///
/// Immutable; any thread may call the turn it rebuilds. `@unchecked Sendable`: the pointer
/// is to code, which never changes.
@frozen
public struct UnitTurnCode: @unchecked Sendable, Equatable {
    /// The closure's code.
    @usableFromInline let code: UnsafeRawPointer

    /// A closure in a struct, so it is stored as declared, never re-abstracted.
    @usableFromInline struct Value {
        @usableFromInline let turn: UnitTurn
        @inlinable init(turn: @escaping UnitTurn) { self.turn = turn }
    }

    /// A closure's two words.
    @usableFromInline struct Words {
        @usableFromInline let code: UnsafeRawPointer
        @usableFromInline let context: UnsafeRawPointer?
        @inlinable init(code: UnsafeRawPointer, context: UnsafeRawPointer?) {
            self.code = code
            self.context = context
        }
    }

    /// `turn`'s code; nil when `turn` has a context (it captures something). Inlined even
    /// in unoptimised builds, where the call allocated (SpawnCostTests counts a spawn's).
    @inlinable @inline(__always)
    public init?(_ turn: @escaping UnitTurn) {
        let words = unsafeBitCast(Value(turn: turn), to: Words.self)
        guard words.context == nil else { return nil }
        code = words.code
    }

    /// The turn of a unit with no turn of its own: through its kind (UnitKind.swift).
    @usableFromInline static let throughKind = UnitTurnCode({ unit, budget, lingering in
        UnitKind.runTurnThroughKind(unit, budget: budget, lingering: lingering)
    }).unsafelyUnwrapped

    /// The closure this code came from.
    @inlinable @inline(__always)
    public var turn: UnitTurn {
        unsafeBitCast(Words(code: code, context: nil), to: Value.self).turn
    }
}
