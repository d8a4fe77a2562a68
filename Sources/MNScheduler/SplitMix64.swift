// SplitMix64 — the seeded pseudo-random generator of the deterministic scheduler.
//
// Steele, Lea & Flood's SplitMix64 (the seeding generator of xoshiro): a 64-bit counter
// advanced by the golden-ratio constant and scrambled. Implemented here, not taken from
// Foundation or `SystemRandomNumberGenerator`, so a seed yields the same sequence on every
// platform and every Swift version: a failing seed replays forever.
//
// Invariant: the output sequence is a pure function of the seed (no global state).

/// A seeded, reproducible random number generator (SplitMix64).
///
/// A value type: copy it to fork a sequence. Not for cryptography.
package struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    /// A generator whose sequence is determined by `seed` alone.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<upperBound` (`upperBound` must be positive; 0 or less yields 0).
    ///
    /// Lemire's multiply-shift reduction, with no rejection step: its tiny bias does not
    /// matter here, and unlike `Int.random(in:using:)` the result cannot change with the
    /// Swift version.
    package mutating func next(below upperBound: Int) -> Int {
        guard upperBound > 1 else { return 0 }
        return Int(next().multipliedFullWidth(by: UInt64(upperBound)).high)
    }
}
