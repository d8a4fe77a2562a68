import Foundation

/// Monotonic time and the statistics every table uses.
enum Clock {
    /// Monotonic nanoseconds. The first reading after CPUMeter.measure armed the meter starts
    /// the CPUs-busy window (a cell's t0).
    static func now() -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        CPUMeter.clockRead(now)
        return now
    }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "median of no values")
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
