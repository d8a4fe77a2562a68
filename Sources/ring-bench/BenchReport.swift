import Foundation

/// One printed table of ring-bench, plus the bars its chart draws.
struct BenchTable: Sendable {
    /// File stem under the results directory ("mailbox" → mailbox.csv, mailbox.svg).
    var name: String
    var title: String
    var columns: [String]
    var rows: [[String]] = []
    /// Bars for the chart: a label and a value in `unit`.
    var bars: [(label: String, value: Double)] = []
    var unit = "M ops/s"
    var notes: [String] = []

    init(name: String, title: String, columns: [String]) {
        self.name = name
        self.title = title
        self.columns = columns
    }

    /// The table as GitHub-flavoured Markdown.
    var markdown: String {
        var out = "### \(title)\n\n"
        out += "| " + columns.joined(separator: " | ") + " |\n"
        out += "|" + columns.map { _ in "---" }.joined(separator: "|") + "|\n"
        for row in rows { out += "| " + row.joined(separator: " | ") + " |\n" }
        for note in notes { out += "\n" + note + "\n" }
        return out
    }

    var csv: String {
        func quote(_ s: String) -> String { s.contains(",") ? "\"\(s)\"" : s }
        return ([columns] + rows).map { $0.map(quote).joined(separator: ",") }.joined(separator: "\n") + "\n"
    }

    /// A horizontal bar chart as SVG: no dependency, readable in any browser or viewer.
    var svg: String {
        let width = 900.0, barHeight = 22.0, gap = 8.0, left = 330.0, top = 40.0
        let maxValue = max(bars.map(\.value).max() ?? 1, 1e-9)
        let height = top + Double(bars.count) * (barHeight + gap) + 30
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="10" y="22" font-size="15" font-weight="bold">\(escape(title)) (\(escape(unit)), median)</text>\n
        """
        for (i, bar) in bars.enumerated() {
            let y = top + Double(i) * (barHeight + gap)
            let w = (width - left - 90) * bar.value / maxValue
            out += "<text x=\"\(left - 8)\" y=\"\(y + 15)\" text-anchor=\"end\">\(escape(bar.label))</text>\n"
            out += "<rect x=\"\(left)\" y=\"\(y)\" width=\"\(String(format: "%.1f", max(w, 1)))\" height=\"\(barHeight)\" fill=\"#4a7bd0\"/>\n"
            out += "<text x=\"\(String(format: "%.1f", left + max(w, 1) + 6))\" y=\"\(y + 15)\">\(String(format: "%.2f", bar.value))</text>\n"
        }
        return out + "</svg>\n"
    }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}

/// Collects tables, prints them, and writes Benchmarks/results/.
struct BenchReport {
    let options: BenchOptions
    var tables: [BenchTable] = []

    mutating func add(_ more: [BenchTable]) {
        for table in more {
            print(table.markdown)
            fflush(nil)
            tables.append(table)
        }
    }

    func write() {
        let fm = FileManager.default
        let dir = options.resultsDirectory
        do {
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
            var summary = "# ring-bench results\n\n"
            summary += "Machine: \(ProcessInfo.processInfo.activeProcessorCount) CPUs online; runs per cell: \(options.runs); operations per run: \(options.operations).\n"
            summary += "Command: `\(CommandLine.arguments.joined(separator: " "))`\n\n"
            for table in tables {
                try table.csv.write(toFile: "\(dir)/\(table.name).csv", atomically: true, encoding: .utf8)
                if !table.bars.isEmpty {
                    try table.svg.write(toFile: "\(dir)/\(table.name).svg", atomically: true, encoding: .utf8)
                }
                summary += table.markdown + "\n"
                if !table.bars.isEmpty { summary += "![\(table.title)](\(table.name).svg)\n\n" }
            }
            try summary.write(toFile: "\(dir)/README.md", atomically: true, encoding: .utf8)
            print("results written to \(dir)/ (README.md, *.csv, *.svg)")
        } catch {
            RingBench.fail("cannot write results to \(dir): \(error)")
        }
    }
}

/// Timing helpers shared by every table.
enum Measure {
    /// Monotonic nanoseconds.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty)
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Runs `body` `runs` times; each returns operations per second. Returns the median
    /// and the spread (max / min) so noisy cells are visible.
    static func medianRate(runs: Int, _ body: () -> Double) -> (median: Double, spread: Double) {
        var rates: [Double] = []
        for _ in 0..<runs { rates.append(body()) }
        let lo = rates.min() ?? 1, hi = rates.max() ?? 1
        return (median(rates), lo > 0 ? hi / lo : .infinity)
    }

    static func mops(_ rate: Double) -> String { String(format: "%.2f", rate / 1e6) }
    static func ratio(_ r: Double) -> String { String(format: "%.2f×", r) }
}
