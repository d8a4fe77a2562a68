import CConcurrencyKit
import Foundation

/// Runs a cell of a runtime whose pool size this process cannot set (Swift's global
/// executor, Dispatch) in a child ring-bench pinned to `workers` CPUs (the platform
/// layer's ckplat_limit_affinity), so those runtimes get a worker sweep too. Where the
/// platform cannot pin, the child reports the cell failed rather than run it unpinned. The child's every thread —
/// the pool's and the driver's — shares those CPUs: stricter than FastMailbox's cells, whose
/// driver thread is not one of its workers, which the tables say.
enum PinnedChild {
    /// Parent side: starts `ring-bench --run-cell JSON` and decodes the outcome it prints.
    static func run(_ cell: Cell) -> RunOutcome {
        guard let json = try? JSONEncoder().encode(cell) else { return .failed("cannot encode the cell") }
        guard let (data, status) = ChildProcess.run(executablePath, ["--run-cell", String(decoding: json, as: UTF8.self)]) else {
            return .failed("cannot start a pinned child")
        }
        guard status == 0, let outcome = try? JSONDecoder().decode(RunOutcome.self, from: data) else {
            return .failed("the pinned child failed (status \(status))")
        }
        return outcome
    }

    /// Child side: pins this process to its first `workers` allowed CPUs before any pool
    /// thread exists, runs the cell once and prints its outcome as JSON.
    static func runHere(_ json: String) -> Never {
        guard let cell = try? JSONDecoder().decode(Cell.self, from: Data(json.utf8)) else {
            RingBench.exit(withError: ValidationErrorMessage("--run-cell: unreadable cell"))
        }
        let pinned = ckplat_limit_affinity(Int32(clamping: cell.workers))
        let outcome = pinned == 0 ? cell.runInProcess()
            : .failed("cannot pin to \(cell.workers) CPUs here (\(String(cString: strerror(pinned))))")
        FileHandle.standardOutput.write((try? JSONEncoder().encode(outcome)) ?? Data())
        exit(0)
    }

    /// This program's file: the platform layer's answer, else Foundation's, else argv[0].
    static var executablePath: String {
        MachineInfo.platformString { ckplat_executable_path($0, $1) }
            ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
    }
}
