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
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let memKiB = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
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
            cpuAvailability: availability.description, memoryBytes: memKiB * 1024, kernel: kernel,
            swiftVersion: firstLine(of: ["swift", "--version"]) ?? "unknown (no toolchain on PATH; static binary)",
            goVersion: includeGo ? GoPeer.version : nil, gitCommit: commit, gitDirty: dirty)
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
