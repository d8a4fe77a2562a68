import Foundation

/// The Go peer (Benchmarks/peers/go): one process per run, so runs alternate with the
/// Swift runtimes' exactly as theirs do. The program times its own run and prints one
/// line of JSON that decodes as a `RunOutcome` ({"seconds", "operations", "extras",
/// "failure"}); GOMAXPROCS is the cell's worker count.
enum GoPeer {
    /// Set by `--go-binary` before any cell runs.
    nonisolated(unsafe) static var binary = "Benchmarks/peers/go/ring-bench-go"

    static func run(_ cell: Cell) -> RunOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["-workload", cell.workload.rawValue, "-param", "\(cell.variant.parameter)", "-size", "\(cell.size)"]
        if let capacity = cell.capacity { arguments += ["-capacity", "\(capacity)"] }
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["GOMAXPROCS"] = "\(cell.workers)"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return .failed("cannot start the Go peer at \(binary): \(error) (scripts/bench.sh --peers go builds it)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return .failed("the Go peer exited with status \(process.terminationStatus)") }
        do {
            return try JSONDecoder().decode(RunOutcome.self, from: data)
        } catch {
            return .failed("unreadable Go peer output: \(String(decoding: data, as: UTF8.self).prefix(200))")
        }
    }

    /// `go version`, for the results' metadata.
    static var version: String? { MachineInfo.firstLine(of: ["go", "version"]) }
}
