import Foundation

/// Monotonic time and the statistics every table uses.
enum Clock {
    /// Monotonic nanoseconds.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "median of no values")
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
