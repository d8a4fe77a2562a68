import Histogram

/// Request–reply latencies of one run in an HdrHistogram (1 ns to 10 s, 3 significant
/// digits), reported as the extras p50_ns, p90_ns, p99_ns, p999_ns and max_ns.
struct LatencyRecorder: Sendable {
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000_000,
                                              numberOfSignificantValueDigits: .three)

    mutating func record(nanoseconds: UInt64) { _ = histogram.record(max(nanoseconds, 1)) }

    var count: Int { Int(histogram.totalCount) }

    var extras: [String: Double] {
        ["p50_ns": Double(histogram.valueAtPercentile(50)), "p90_ns": Double(histogram.valueAtPercentile(90)),
         "p99_ns": Double(histogram.valueAtPercentile(99)), "p999_ns": Double(histogram.valueAtPercentile(99.9)),
         "max_ns": Double(histogram.max)]
    }

    /// The extras' keys in print order, with their table headers.
    static let columns: [(key: String, title: String)] = [("p50_ns", "p50"), ("p90_ns", "p90"), ("p99_ns", "p99"), ("p999_ns", "p99.9")]
}
