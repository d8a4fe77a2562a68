import CConcurrencyKit
import Foundation
import MNScheduler

/// Where and with what the results were measured; written into every JSON and README.
struct MachineInfo: Codable, Sendable {
    var cpuModel: String
    var cpusAllowed: Int
    var cpusOnline: Int
    var cpuAvailability: String
    var memoryBytes: Int
    var kernel: String
    var swiftVersion: String
    var goVersion: String?
    var gitCommit: String
    var gitDirty: Bool

    static func current(includeGo: Bool) -> MachineInfo {
        let model = platformString { ckplat_cpu_model($0, $1) } ?? "unknown"
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let availability = CPUAvailability.current()
        let commit = ProcessInfo.processInfo.environment["RING_BENCH_COMMIT"]
            ?? firstLine(of: ["git", "rev-parse", "HEAD"]) ?? "unknown"
        let dirty = ProcessInfo.processInfo.environment["RING_BENCH_COMMIT"] == nil
            && !(firstLine(of: ["git", "status", "--porcelain", "--untracked-files=no"]) ?? "").isEmpty
        return MachineInfo(
            cpuModel: model, cpusAllowed: availability.usableCPUs, cpusOnline: availability.onlineCPUs,
            cpuAvailability: availability.description, memoryBytes: Int(ckplat_memory_total()), kernel: kernel,
            swiftVersion: firstLine(of: ["swift", "--version"]) ?? "unknown (no toolchain on PATH; static binary)",
            goVersion: includeGo ? GoPeer.version : nil, gitCommit: commit, gitDirty: dirty)
    }

    /// The text a platform call (buffer, capacity → 0 or an errno value) writes, nil when
    /// it fails or writes nothing.
    static func platformString(_ call: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = buffer.withUnsafeMutableBufferPointer { call($0.baseAddress!, $0.count) }
        guard status == 0 else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// The first line a command prints, or nil when it cannot run.
    static func firstLine(of command: [String]) -> String? {
        guard let (data, status) = ChildProcess.run("/usr/bin/env", command, quietStderr: true), status == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    var markdown: String {
        """
        Machine: \(cpuModel), \(cpusAllowed) CPUs allowed (\(cpuAvailability)), \(memoryBytes >> 30) GiB, Linux \(kernel).
        Toolchain: \(swiftVersion)\(goVersion.map { "; \($0)" } ?? ""). Commit: \(gitCommit)\(gitDirty ? " (with uncommitted changes)" : "").
        """
    }
}
