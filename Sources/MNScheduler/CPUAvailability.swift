// CPUAvailability — how many CPUs this process may actually use.
//
// The default worker count is the smallest of:
//   1. the CPUs in this thread's affinity mask (sched_getaffinity: taskset, cpusets);
//   2. the cgroup CPU quota, rounded up: cgroup v2 `cpu.max` ("<quota> <period>" or
//      "max <period>"), else cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`
//      (quota −1 means unlimited). The cgroup directory is taken from /proc/self/cgroup,
//      falling back to the mount root /sys/fs/cgroup;
//   3. the CPUs online (sysconf), used when neither of the above is known;
// and at least 1. The platform layer gives the raw values; parsing stays here, in pure
// functions, so tests cover every format on any platform. The kernel writes quota and
// period as decimal integers, and the parsers accept exactly that: anything else, and
// quotas above `maximumQuotaCPUs`, count as unknown, so no input can make it trap.

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

    /// Figures given directly (tests, or a caller that measured them another way); any values
    /// are accepted, and `usableCPUs` stays at least 1.
    public init(affinityCPUs: Int?, cgroupQuotaCPUs: Double?, cgroupQuotaSource: String? = nil, onlineCPUs: Int) {
        self.affinityCPUs = affinityCPUs
        self.cgroupQuotaCPUs = cgroupQuotaCPUs
        self.cgroupQuotaSource = cgroupQuotaSource
        self.onlineCPUs = onlineCPUs
    }

    /// The default worker count: min(affinity, ceil(quota)), else online CPUs; at least 1.
    /// A quota that is not a finite positive number is ignored.
    public var usableCPUs: Int {
        var n = max(affinityCPUs ?? onlineCPUs, 1)
        // quota < n keeps the conversion to Int in range (n is a small CPU count).
        if let quota = cgroupQuotaCPUs, quota.isFinite, quota > 0, quota < Double(n) {
            n = max(Int(quota.rounded(.up)), 1)
        }
        return n
    }

    public var description: String {
        var parts = ["affinity \(affinityCPUs.map(String.init) ?? "unknown")"]
        if let quota = cgroupQuotaCPUs {
            parts.append("cgroup quota \(quota) CPUs (\(cgroupQuotaSource ?? "?"))")
        } else if let source = cgroupQuotaSource {
            parts.append("cgroup quota unlimited or unreadable (\(source))")
        } else {
            parts.append("no cgroup CPU controller found")
        }
        parts.append("online \(onlineCPUs)")
        return "\(usableCPUs) usable CPUs (" + parts.joined(separator: ", ") + ")"
    }

    /// Reads the current process's affinity mask, cgroup quota and online CPUs.
    public static func current() -> CPUAvailability {
        let affinity = Int(ckplat_affinity_cpu_count())
        let online = Int(ckplat_online_cpus())
        let (quota, source) = ckplat_has_cgroups() != 0 ? readCgroupQuota() : (nil, nil)
        return CPUAvailability(
            affinityCPUs: affinity > 0 ? affinity : nil,
            cgroupQuotaCPUs: quota, cgroupQuotaSource: source,
            onlineCPUs: max(online, 1))
    }

    // MARK: parsing (pure)

    /// Largest quota believed, in CPUs; a larger one is treated as unknown (no limit).
    package static let maximumQuotaCPUs = 1 << 20

    /// Parses cgroup v2 `cpu.max`: "max 100000" → nil (unlimited), "150000 100000" → 1.5
    /// (a missing period means 100000). Malformed text → nil (see the file comment).
    package static func parseCgroupV2CPUMax(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        guard fields.count >= 1, fields[0] != "max" else { return nil }
        return quotaCPUs(quota: fields[0], period: fields.count >= 2 ? fields[1] : "100000")
    }

    /// Parses cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: quota −1 → nil.
    /// Malformed text → nil (see the file comment).
    package static func parseCgroupV1(quota: String, period: String) -> Double? {
        quotaCPUs(quota: Substring(quota.filter { !$0.isWhitespace }),
                  period: Substring(period.filter { !$0.isWhitespace }))
    }

    /// quota / period for two positive decimal integers when the result is at most
    /// `maximumQuotaCPUs`; nil for anything else.
    static func quotaCPUs(quota: Substring, period: Substring) -> Double? {
        guard let q = UInt64(quota), q > 0, let p = UInt64(period), p > 0 else { return nil }
        let cpus = Double(q) / Double(p)
        guard cpus.isFinite, cpus <= Double(maximumQuotaCPUs) else { return nil }
        return cpus
    }

    /// From /proc/self/cgroup, the cgroup v2 path ("0::/path") and the v1 cpu controller
    /// path ("N:cpu,cpuacct:/path").
    package static func parseProcSelfCgroup(_ text: String) -> (v2: String?, v1CPU: (controllers: String, path: String)?) {
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
        guard let root = ckplat_cgroup_root().map({ String(cString: $0) }) else { return (nil, nil) }
        let membership = readText { ckplat_read_cgroup_membership($0, $1) }.map(parseProcSelfCgroup)
        // Paths below the cgroup root, each starting with "/".
        var v2Candidates: [String] = []
        if let path = membership?.v2, path != "/" { v2Candidates.append("\(path)/cpu.max") }
        v2Candidates.append("/cpu.max")
        for file in v2Candidates {
            if let text = readCgroupFile(file) {
                return (parseCgroupV2CPUMax(text), root + file)
            }
        }
        var v1Dirs: [String] = []
        if let v1 = membership?.v1CPU {
            v1Dirs.append("/\(v1.controllers)\(v1.path)")
            v1Dirs.append("/cpu\(v1.path)")
        }
        v1Dirs += ["/cpu,cpuacct", "/cpu"]
        for dir in v1Dirs {
            if let quota = readCgroupFile("\(dir)/cpu.cfs_quota_us"),
               let period = readCgroupFile("\(dir)/cpu.cfs_period_us") {
                return (parseCgroupV1(quota: quota, period: period), "\(root)\(dir)/cpu.cfs_quota_us")
            }
        }
        return (nil, nil)
    }

    /// A cgroup file below the platform layer's cgroup root, nil when it cannot be read.
    static func readCgroupFile(_ relative: String) -> String? {
        readText { ckplat_read_cgroup_file(relative, $0, $1) }
    }

    /// The first 4 KiB a platform read gives (its length, or -1), nil when it fails.
    static func readText(_ read: (UnsafeMutablePointer<CChar>, Int) -> Int) -> String? {
        var bytes = [CChar](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBufferPointer { read($0.baseAddress!, $0.count) }
        guard n >= 0 else { return nil }
        return String(decoding: bytes[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
