import Foundation

/// One workload's results as Markdown: a row per (variant, workers), a column per runtime
/// (medians), then the reference runtime's ratio to each peer, then the extras (latency
/// percentiles, bytes per actor) where the workload has them.
struct ResultsTable {
    let workload: Workload
    let results: [CellResult]
    let repeats: Int

    private var runtimes: [Runtime] { workload.runtimes.filter { r in results.contains { $0.cell.runtime == r } } }
    private var peers: [Runtime] { runtimes.filter { $0 != workload.reference } }

    private var rows: [(Variant, Int)] {
        var seen: [(Variant, Int)] = []
        for result in results where !seen.contains(where: { $0.0 == result.cell.variant && $0.1 == result.cell.workers }) {
            seen.append((result.cell.variant, result.cell.workers))
        }
        return seen
    }

    private func result(_ variant: Variant, _ workers: Int, _ runtime: Runtime) -> CellResult? {
        results.first { $0.cell.variant == variant && $0.cell.workers == workers && $0.cell.runtime == runtime }
    }

    /// A figure in the table's unit: M ops/s, or µs for latency.
    func format(_ value: Double) -> String {
        workload.isLatency ? String(format: value < 10_000 ? "%.2f" : "%.1f", value / 1e3) : String(format: value >= 1e7 ? "%.1f" : "%.2f", value / 1e6)
    }

    /// How many times faster the reference is than `peer` (> 1: the reference is faster).
    static func speedup(reference: Double, peer: Double, latency: Bool) -> Double {
        latency ? peer / reference : reference / peer
    }

    var markdown: String {
        let unit = workload.isLatency ? "µs per ask, p50" : "M \(workload.operationName)/s"
        var out = "### \(workload.rawValue)\n\n\(workload.summary.prefix(1).uppercased() + workload.summary.dropFirst()).\n"
        out += "Medians of \(repeats) runs of \(results.first.map { "\($0.cell.size)" } ?? "?") \(workload == .parallel ? "messages per actor" : workload == .skynet ? "leaves" : workload.operationName), in \(unit)"
        out += workload.isLatency ? " (lower is better).\n\n" : " (higher is better).\n\n"
        let ref = workload.reference.title
        let columns = ["row", "workers"] + runtimes.map(\.title) + peers.map { "\(ref) vs \($0.title)" }
        out += "| " + columns.joined(separator: " | ") + " |\n|" + columns.map { _ in "---" }.joined(separator: "|") + "|\n"
        for (variant, workers) in rows {
            var cells = [variant.name.isEmpty ? "–" : variant.name, "\(workers)"]
            for runtime in runtimes {
                guard let r = result(variant, workers, runtime) else { cells.append("–"); continue }
                if let failure = r.failure { cells.append("CHECK FAILED: \(failure)") } else { cells.append(r.median.map(format) ?? "–") }
            }
            let reference = result(variant, workers, workload.reference)?.median
            for peer in peers {
                if let reference, let value = result(variant, workers, peer)?.median, value > 0 {
                    cells.append(String(format: "%.2f×", Self.speedup(reference: reference, peer: value, latency: workload.isLatency)))
                } else {
                    cells.append("–")
                }
            }
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        out += "\n\"\(ref) vs X\": how many times faster \(ref) is than X in that row (> 1: \(ref) is faster)."
        if peers.contains(.swift) || peers.contains(.dispatch) {
            out += " Swift's global executor and Dispatch size their own pools: with fewer workers than CPUs allowed they run in a child process pinned to that many CPUs, driver thread included (FastMailbox's driver thread is not one of its workers)."
        }
        if let note = workload.semanticsNote { out += " " + note }
        out += "\n"
        out += extrasMarkdown
        out += busyMarkdown
        return out + "\n"
    }

    /// CPUs busy per cell and, in a worker sweep, each cell's figure over the same
    /// runtime's at the fewest workers (> 1: faster with more workers): scaling read beside
    /// the cores it cost.
    private var busyMarkdown: String {
        let busy = CPUMeter.key
        guard results.contains(where: { $0.extras[busy] != nil }) else { return "" }
        let workerCounts = Set(rows.map(\.1))
        let sweep = workerCounts.count > 1
        let fewest = workerCounts.min() ?? 1
        var columns = ["row", "workers"]
        for runtime in runtimes {
            columns.append("\(runtime.title) CPUs busy")
            if sweep { columns.append("\(runtime.title) vs \(fewest)w") }
        }
        var out = "\n| " + columns.joined(separator: " | ") + " |\n|" + columns.map { _ in "---" }.joined(separator: "|") + "|\n"
        for (variant, workers) in rows {
            var cells = [variant.name.isEmpty ? "–" : variant.name, "\(workers)"]
            for runtime in runtimes {
                let r = result(variant, workers, runtime)
                cells.append(r?.extras[busy].map { String(format: "%.2f", $0) } ?? "–")
                guard sweep else { continue }
                if let value = r?.median, let base = result(variant, fewest, runtime)?.median, base > 0, value > 0 {
                    cells.append(String(format: "%.2f×", Self.speedup(reference: value, peer: base, latency: workload.isLatency)))
                } else {
                    cells.append("–")
                }
            }
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        out += "\nCPUs busy: the process's CPU time (user + system) over wall time for the whole cell, median of the runs (a child process's own for Go and pinned cells)."
        if sweep { out += " \"vs \(fewest)w\": the median at this worker count over the same runtime's at \(fewest) (> 1: faster)." }
        return out + "\n"
    }

    private var extrasMarkdown: String {
        let keys: [(key: String, title: String)]
        let scale: Double
        switch workload {
        case .ask: keys = LatencyRecorder.columns.map { ($0.key, "\($0.title) µs") }; scale = 1e-3
        case .spawn:
            keys = [("heap_bytes_per_actor", "heap B/actor"), ("rss_bytes_per_actor", "RSS B/actor"),
                    ("heap_bytes_per_actor_reclaimed", "heap B/actor once idle"), ("reclaim_walk_ns_per_actor", "asking walk ns/actor"),
                    ("idle_walk_ns_per_actor", "idle walk ns/actor")]
            scale = 1
        case .parallel: keys = [("compute_ceiling", "compute-only ceiling, M msgs/s")]; scale = 1e-6
        case .mailbox: keys = [("overflow_percent", "overflow %")]; scale = 1
        case .fanin: keys = [("overflow_percent", "overflow %"), ("steals", "steals"), ("long_turn_steals", "from a long turn"), ("parks", "parks")]; scale = 1
        default: return ""
        }
        var out = "\n| row | workers | runtime | " + keys.map(\.title).joined(separator: " | ") + " |\n|---|---|---|" + keys.map { _ in "---" }.joined(separator: "|") + "|\n"
        for (variant, workers) in rows {
            for runtime in runtimes {
                guard let r = result(variant, workers, runtime), r.failure == nil else { continue }
                let extras = r.extras
                let values = keys.map { extras[$0.key].map { String(format: scale == 1 ? "%.0f" : $0 < 10_000 ? "%.2f" : "%.1f", $0 * scale) } ?? "–" }
                guard values.contains(where: { $0 != "–" }) else { continue }  // a runtime without these extras
                out += "| \(variant.name.isEmpty ? "–" : variant.name) | \(workers) | \(runtime.title) | " + values.joined(separator: " | ") + " |\n"
            }
        }
        return out
    }
}
