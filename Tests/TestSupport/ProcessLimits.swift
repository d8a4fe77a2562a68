// ProcessLimits — helpers the test suites share for running code under a memory limit
// (the tests that check an allocation failure is reported, not trapped on).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// True under ASan or TSan (their runtimes export these symbols): they own the allocator
/// and abort on a memory limit, so limit tests are skipped there.
public func runningUnderSanitizer() -> Bool {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
        || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
}

/// Caps this process's data segment (RLIMIT_DATA: heap and private anonymous mappings
/// since Linux 4.7) at its current size plus `headroomBytes`. Use it in an exit test's
/// child process only: the limit cannot be raised again.
public func limitDataSegment(headroomBytes: Int) {
    var current = 0
    if let file = fopen("/proc/self/status", "r") {
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("VmData:") {
                current = (Int(text.dropFirst(7).filter(\.isNumber)) ?? 0) * 1024
            }
        }
    }
    var limit = rlimit(rlim_cur: rlim_t(current + headroomBytes), rlim_max: rlim_t(current + headroomBytes))
    _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
}
