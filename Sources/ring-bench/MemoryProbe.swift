import CConcurrencyKit
import Foundation

/// Process memory readings for the spawn workload.
enum MemoryProbe {
    /// Heap bytes in use (glibc mallinfo2, every arena).
    static func heapBytes() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)
    }

    /// Resident set size in bytes (/proc/self/statm).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
