// OwnerGuess: what a schedule guesses about the unit's owner bit O, as a type. T1's first
// compare-and-swap expects the guessed value (UnitHeader.swift, T1 and L2); a wrong guess
// costs one more, never a wrong result. An actor cell is usually registered, so its sends
// guess O set; an executor or a test unit has no owner.

/// The owner bit a schedule guesses; every guess is correct, a good one saves a CAS.
@usableFromInline
package protocol OwnerGuess {
    /// The guessed value of O.
    static var expectsOwner: Bool { get }
}

/// Guesses O set: a unit whose owner holds a reference (a registered actor cell).
@usableFromInline
package enum GuessOwner: OwnerGuess {
    @inlinable package static var expectsOwner: Bool { true }
}

/// Guesses O clear: an executor, a lane, a unit without an owner.
@usableFromInline
package enum GuessNoOwner: OwnerGuess {
    @inlinable package static var expectsOwner: Bool { false }
}
