import Foundation

/// A one-line progress report on stderr (workload, run i of n, elapsed, ETA), redrawn in
/// place; silent when stderr is not a terminal, so logs and CI output stay clean.
struct Progress {
    let total: Int
    private(set) var done = 0
    private let start = Clock.now()
    private let enabled = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = total }

    mutating func starting(_ cell: Cell, run: Int) {
        guard enabled else { return }
        let elapsed = Double(Clock.now() - start) / 1e9
        let eta = done > 0 ? elapsed / Double(done) * Double(total - done) : 0
        let what = "\(cell.workload.rawValue) \(cell.variant.name) W=\(cell.workers) \(cell.runtime.rawValue) run \(run)"
        let line = String(format: "ring-bench: %@ — %d/%d, %.0f s elapsed, ETA %.0f s", what, done + 1, total, elapsed, eta)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    mutating func finished() { done += 1 }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
