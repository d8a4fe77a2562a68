import Foundation

/// Everything one ring-bench invocation measured, as written to results.json (schema
/// "ring-bench/2", documented in Benchmarks/README.md) and flattened to results.csv.
struct ResultsDocument: Codable {
    /// The settings the cells ran with.
    struct Settings: Codable {
        var workloads: [Workload]
        var runtimes: [Runtime]
        var workers: [Int]
        var producers: [Int]?
        var capacity: Int?
        var repeats: Int
        var scale: Scale
    }

    /// One cell's figures.
    struct Record: Codable {
        var workload: Workload
        var variant: String
        var parameter: Int
        var runtime: Runtime
        var workers: Int
        /// Operations per run (per actor for parallel, leaves for skynet).
        var size: Int
        /// "ops/s" for throughput workloads, "ns (p50)" for ask.
        var unit: String
        /// One value per run, in `unit`.
        var runs: [Double]
        var median: Double?
        var min: Double?
        var max: Double?
        /// Medians over runs of the workload's extras (latency percentiles, bytes per actor).
        var extras: [String: Double]
        /// The failed self-check; when set, the figures above are absent.
        var failure: String?
    }

    var schema = "ring-bench/2"
    var generated: String
    var command: [String]
    var machine: MachineInfo
    var settings: Settings
    /// The scheduler configuration and the MN_ environment (absent in files written before
    /// ring-bench recorded them).
    var configuration: RunConfiguration?
    var cells: [Record]

    init(command: [String], machine: MachineInfo, settings: Settings, configuration: RunConfiguration,
         results: [CellResult]) {
        generated = ISO8601DateFormatter().string(from: Date())
        self.command = command
        self.machine = machine
        self.settings = settings
        self.configuration = configuration
        cells = results.map { r in
            Record(workload: r.cell.workload, variant: r.cell.variant.name, parameter: r.cell.variant.parameter,
                   runtime: r.cell.runtime, workers: r.cell.workers, size: r.cell.size,
                   unit: r.unit.replacingOccurrences(of: "\(r.cell.workload.operationName)/s", with: "ops/s"),
                   runs: r.failure == nil ? r.values : [], median: r.median, min: r.min, max: r.max,
                   extras: r.extras, failure: r.failure)
        }
    }

    var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// One row per cell; the last columns repeat the run's scheduler settings (other than
    /// workers, a column of its own) and its MN_ environment on every row, so a row read
    /// alone still says what it ran with.
    var csv: String {
        let extraKeys = Array(Set(cells.flatMap { $0.extras.keys })).sorted()
        let settings = (configuration?.scheduler ?? []).filter { $0.setting != "workers" }
        let runColumns = settings.map(\.setting) + ["mn_environment"]
        let runFields = settings.map(\.value) + [configuration?.environmentText ?? ""]
        func quote(_ s: String) -> String { s.contains(",") || s.contains("\"") ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s }
        func number(_ v: Double?) -> String { v.map { String(format: "%.6g", $0) } ?? "" }
        var out = (["workload", "variant", "runtime", "workers", "size", "unit", "median", "min", "max", "runs"] + extraKeys + ["failure"] + runColumns).joined(separator: ",") + "\n"
        for c in cells {
            let fields = [c.workload.rawValue, c.variant, c.runtime.rawValue, "\(c.workers)", "\(c.size)", c.unit,
                          number(c.median), number(c.min), number(c.max), c.runs.map { String(format: "%.6g", $0) }.joined(separator: " ")]
                + extraKeys.map { number(c.extras[$0]) } + [c.failure ?? ""] + runFields
            out += fields.map(quote).joined(separator: ",") + "\n"
        }
        return out
    }
}
