import Foundation

/// The history of published runs (Benchmarks/results/history.md): a Markdown table, one
/// row per run, with the headline ratios, so a change between runs shows at a glance.
///
/// A headline ratio is FastMailbox's figure over Swift actors' in a headline workload's
/// first row at the run's largest worker count (for latency, Swift's over FastMailbox's):
/// above 1, FastMailbox is faster. Ratios come from one run, so the machine's speed cancels.
enum HistoryFile {
    /// The peer every headline ratio compares with.
    static let peer = Runtime.swift

    static var header: String {
        """
        # ring-bench history

        One row per run published to Benchmarks/results (`scripts/bench.sh --results Benchmarks/results`).
        Each workload column: FastMailbox's median over \(peer.title)'s in the workload's first row at the \
        run's most workers (for ask, a latency, the inverse); above 1, FastMailbox is faster. \
        "–": the run had no such cell.

        | date | commit | workers | MN_ environment | \(Workload.headline.map(\.rawValue).joined(separator: " | ")) |
        |---|---|---|---|\(Workload.headline.map { _ in "---" }.joined(separator: "|"))|

        """
    }

    /// The row of one run.
    static func row(_ document: ResultsDocument) -> String {
        let workers = document.settings.workers.max() ?? 0
        let ratios = Workload.headline.map { workload -> String in
            let cells = document.cells.filter { $0.workload == workload && $0.workers == workers && $0.failure == nil }
            guard let variant = cells.first?.variant,
                  let reference = cells.first(where: { $0.variant == variant && $0.runtime == workload.reference })?.median,
                  let other = cells.first(where: { $0.variant == variant && $0.runtime == peer })?.median,
                  reference > 0, other > 0 else { return "–" }
            return String(format: "%.2f×", ResultsTable.speedup(reference: reference, peer: other, latency: workload.isLatency))
        }
        let raw = document.machine.gitCommit  // scripts/bench.sh marks uncommitted sources with "+changes"
        let commit = String(raw.prefix(10)) + (document.machine.gitDirty || raw.hasSuffix("+changes") ? "+" : "")
        let environment = document.configuration.map(\.environmentText) ?? "not recorded"
        return "| \(document.generated.prefix(10)) | \(commit) | \(workers) | \(environment) | "
            + ratios.joined(separator: " | ") + " |"
    }

    /// Appends the row of `document` to the file at `path`, writing the header first when
    /// the file does not exist.
    static func append(_ document: ResultsDocument, to path: String) throws {
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) { try header.write(toFile: path, atomically: true, encoding: .utf8) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((row(document) + "\n").utf8))
    }
}
