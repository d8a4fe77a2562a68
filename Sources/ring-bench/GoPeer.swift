import Foundation

/// The Go peer (Benchmarks/peers/go): one process per run, so runs alternate with the
/// Swift runtimes' exactly as theirs do. The program times its own run and prints one
/// line of JSON that decodes as a `RunOutcome` ({"seconds", "operations", "extras",
/// "failure"}); GOMAXPROCS is the cell's worker count.
enum GoPeer {
    /// Set by `--go-binary` before any cell runs.
    nonisolated(unsafe) static var binary = "Benchmarks/peers/go/ring-bench-go"

    static func run(_ cell: Cell) -> RunOutcome {
        var arguments = ["-workload", cell.workload.rawValue, "-param", "\(cell.workload.peerParameter(cell.variant))",
                         "-size", "\(cell.size)"]
        if let capacity = cell.capacity { arguments += ["-capacity", "\(capacity)"] }
        var environment = ProcessInfo.processInfo.environment
        environment["GOMAXPROCS"] = "\(cell.workers)"
        guard let (data, status) = ChildProcess.run(binary, arguments, environment: environment) else {
            return .failed("cannot start the Go peer at \(binary) (scripts/bench.sh --peers go builds it)")
        }
        guard status == 0 else { return .failed("the Go peer exited with status \(status)") }
        do {
            return try JSONDecoder().decode(RunOutcome.self, from: data)
        } catch {
            return .failed("unreadable Go peer output: \(String(decoding: data, as: UTF8.self).prefix(200))")
        }
    }

    /// `go version`, for the results' metadata.
    static var version: String? { MachineInfo.firstLine(of: ["go", "version"]) }
}
