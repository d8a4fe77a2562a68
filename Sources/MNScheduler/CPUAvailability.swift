// CPUAvailability — how many CPUs this process may actually use.
//
// The default worker count is the smallest of:
//   1. the CPUs in this thread's affinity mask (sched_getaffinity: taskset, cpusets);
//   2. the cgroup CPU quota, rounded up: cgroup v2 `cpu.max` ("<quota> <period>" or
//      "max <period>"), else cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`
//      (quota −1 means unlimited). The cgroup directory is taken from /proc/self/cgroup,
//      falling back to the mount root /sys/fs/cgroup;
//   3. the CPUs online (sysconf), used when neither of the above is known;
// and at least 1. Parsing is split into pure functions so tests cover every format.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CConcurrencyKit

/// The CPUs available to this process, and where the number came from.
public struct CPUAvailability: Sendable, Equatable, CustomStringConvertible {
    /// CPUs in the affinity mask, nil when sched_getaffinity failed.
    public var affinityCPUs: Int?
    /// The cgroup quota in CPUs (quota / period, fractional), nil when unlimited or unknown.
    public var cgroupQuotaCPUs: Double?
    /// Where the quota was read from (a file path), nil when none.
    public var cgroupQuotaSource: String?
    /// CPUs online (sysconf(_SC_NPROCESSORS_ONLN)).
    public var onlineCPUs: Int

    public init(affinityCPUs: Int?, cgroupQuotaCPUs: Double?, cgroupQuotaSource: String? = nil, onlineCPUs: Int) {
        self.affinityCPUs = affinityCPUs
        self.cgroupQuotaCPUs = cgroupQuotaCPUs
        self.cgroupQuotaSource = cgroupQuotaSource
        self.onlineCPUs = onlineCPUs
    }

    /// The default worker count: min(affinity, ceil(quota)), else online CPUs; at least 1.
    public var usableCPUs: Int {
        var n = affinityCPUs ?? max(onlineCPUs, 1)
        if let quota = cgroupQuotaCPUs {
            let rounded = Int(quota.rounded(.up))
            n = min(n, max(rounded, 1))
        }
        return max(n, 1)
    }

    public var description: String {
        var parts = ["affinity \(affinityCPUs.map(String.init) ?? "unknown")"]
        if let quota = cgroupQuotaCPUs {
            parts.append("cgroup quota \(quota) CPUs (\(cgroupQuotaSource ?? "?"))")
        } else if let source = cgroupQuotaSource {
            parts.append("cgroup quota unlimited (\(source))")
        } else {
            parts.append("no cgroup CPU controller found")
        }
        parts.append("online \(onlineCPUs)")
        return "\(usableCPUs) usable CPUs (" + parts.joined(separator: ", ") + ")"
    }

    /// Reads the current process's affinity mask, cgroup quota and online CPUs.
    public static func current() -> CPUAvailability {
        let affinity = Int(ckshim_affinity_cpu_count())
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let (quota, source) = readCgroupQuota()
        return CPUAvailability(
            affinityCPUs: affinity > 0 ? affinity : nil,
            cgroupQuotaCPUs: quota, cgroupQuotaSource: source,
            onlineCPUs: max(online, 1))
    }

    // MARK: parsing (pure)

    /// Parses cgroup v2 `cpu.max`: "max 100000" → nil (unlimited), "150000 100000" → 1.5.
    /// Malformed text → nil.
    public static func parseCgroupV2CPUMax(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        guard fields.count >= 1, fields[0] != "max", let quota = Double(fields[0]), quota > 0 else { return nil }
        let period = fields.count >= 2 ? Double(fields[1]) ?? 100_000 : 100_000
        guard period > 0 else { return nil }
        return quota / period
    }

    /// Parses cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: quota −1 → nil.
    public static func parseCgroupV1(quota: String, period: String) -> Double? {
        func number(_ s: String) -> Double? { Double(s.filter { !$0.isWhitespace }) }
        guard let q = number(quota), q > 0, let p = number(period), p > 0 else { return nil }
        return q / p
    }

    /// From /proc/self/cgroup, the cgroup v2 path ("0::/path") and the v1 cpu controller
    /// path ("N:cpu,cpuacct:/path").
    public static func parseProcSelfCgroup(_ text: String) -> (v2: String?, v1CPU: (controllers: String, path: String)?) {
        var v2: String?
        var v1: (String, String)?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty {
                v2 = String(parts[2])
            } else if parts[1].split(separator: ",").contains("cpu") {
                v1 = (String(parts[1]), String(parts[2]))
            }
        }
        return (v2, v1)
    }

    // MARK: reading

    static func readCgroupQuota() -> (Double?, String?) {
        let membership = readSmallFile("/proc/self/cgroup").map(parseProcSelfCgroup)
        var v2Candidates: [String] = []
        if let path = membership?.v2, path != "/" { v2Candidates.append("/sys/fs/cgroup\(path)/cpu.max") }
        v2Candidates.append("/sys/fs/cgroup/cpu.max")
        for file in v2Candidates {
            if let text = readSmallFile(file) {
                return (parseCgroupV2CPUMax(text), file)
            }
        }
        var v1Dirs: [String] = []
        if let v1 = membership?.v1CPU {
            v1Dirs.append("/sys/fs/cgroup/\(v1.controllers)\(v1.path)")
            v1Dirs.append("/sys/fs/cgroup/cpu\(v1.path)")
        }
        v1Dirs += ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"]
        for dir in v1Dirs {
            if let quota = readSmallFile("\(dir)/cpu.cfs_quota_us"),
               let period = readSmallFile("\(dir)/cpu.cfs_period_us") {
                return (parseCgroupV1(quota: quota, period: period), "\(dir)/cpu.cfs_quota_us")
            }
        }
        return (nil, nil)
    }

    /// The first 4 KiB of a small text file, nil when it cannot be read.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { return nil }
        return String(decoding: bytes[0..<n], as: UTF8.self)
    }
}
