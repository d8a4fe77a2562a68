import Foundation

/// Runs a cell of a runtime whose pool size this process cannot set (Swift's global
/// executor, Dispatch) in a child ring-bench pinned to `workers` CPUs with
/// sched_setaffinity, so those runtimes get a worker sweep too. The child's every thread —
/// the pool's and the driver's — shares those CPUs: stricter than FastMailbox's cells, whose
/// driver thread is not one of its workers, which the tables say.
enum PinnedChild {
    /// Parent side: starts `ring-bench --run-cell JSON` and decodes the outcome it prints.
    static func run(_ cell: Cell) -> RunOutcome {
        guard let json = try? JSONEncoder().encode(cell) else { return .failed("cannot encode the cell") }
        guard let (data, status) = ChildProcess.run("/proc/self/exe", ["--run-cell", String(decoding: json, as: UTF8.self)]) else {
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
        pin(to: cell.workers)
        let outcome = cell.runInProcess()
        FileHandle.standardOutput.write((try? JSONEncoder().encode(outcome)) ?? Data())
        exit(0)
    }

    /// Restricts the process to the first `count` CPUs of its current affinity mask.
    /// glibc's sched_{get,set}affinity are declared only under _GNU_SOURCE, which Swift's
    /// Glibc module does not set, so they are looked up with dlsym.
    static func pin(to count: Int) {
        typealias Affinity = @convention(c) (Int32, Int, UnsafeMutableRawPointer) -> Int32
        guard let get = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_getaffinity"),
              let set = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return }
        let getAffinity = unsafeBitCast(get, to: Affinity.self), setAffinity = unsafeBitCast(set, to: Affinity.self)
        var mask = [UInt8](repeating: 0, count: 128)  // 1024 CPUs, glibc's cpu_set_t
        mask.withUnsafeMutableBytes { bytes in
            guard getAffinity(0, bytes.count, bytes.baseAddress!) == 0 else { return }
            var kept = 0
            for bit in 0..<(bytes.count * 8) where bytes[bit / 8] & UInt8(1 << (bit % 8)) != 0 {
                if kept < count { kept += 1 } else { bytes[bit / 8] &= ~UInt8(1 << (bit % 8)) }
            }
            _ = setAffinity(0, bytes.count, bytes.baseAddress!)
        }
    }
}
