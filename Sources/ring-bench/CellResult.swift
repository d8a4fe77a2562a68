/// Every run of one cell, and the figures the report prints from them.
struct CellResult: Codable, Sendable {
    var cell: Cell
    var outcomes: [RunOutcome] = []

    /// The first failed check, if any run's check failed (the cell then has no figure).
    var failure: String? { outcomes.lazy.compactMap(\.failure).first }

    /// One value per run in the workload's headline unit: ops/s, or p50 latency in ns for ask.
    var values: [Double] {
        outcomes.map { cell.workload.isLatency ? ($0.extras["p50_ns"] ?? 0) : $0.rate }
    }

    var median: Double? { failure == nil && !outcomes.isEmpty ? Clock.median(values) : nil }
    var min: Double? { failure == nil ? values.min() : nil }
    var max: Double? { failure == nil ? values.max() : nil }

    /// The median of each extra over the runs.
    var extras: [String: Double] {
        guard failure == nil, let keys = outcomes.first?.extras.keys else { return [:] }
        var result: [String: Double] = [:]
        for key in keys { result[key] = Clock.median(outcomes.compactMap { $0.extras[key] }) }
        return result
    }

    /// The headline unit, for tables and files.
    var unit: String { cell.workload.isLatency ? "ns (p50)" : "\(cell.workload.operationName)/s" }
}
