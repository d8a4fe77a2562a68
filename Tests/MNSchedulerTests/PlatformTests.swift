import Testing
import Synchronization
import CConcurrencyKit
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler

/// The platform layer (CConcurrencyKit's ckplatform.h), in whichever implementation this
/// build has: Linux's, or the portable one (`-Xcc -DCKSHIM_PORTABLE=1`, which .ci/run
/// builds and tests too). Each test holds in both; the mode-specific ones say which.
@Suite struct PlatformTests {
    /// A wait word in its own allocation (a stable address), as Parker's and FutexLock's.
    final class Word: @unchecked Sendable {
        let atomic: UnsafeMutablePointer<Atomic<UInt32>>
        init(_ value: UInt32) {
            atomic = .allocate(capacity: 1)
            atomic.initialize(to: Atomic<UInt32>(value))
        }
        deinit { atomic.deinitialize(count: 1); atomic.deallocate() }
        var address: UnsafeMutablePointer<UInt32> {
            UnsafeMutableRawPointer(atomic).assumingMemoryBound(to: UInt32.self)
        }
    }

    static func nanosecondsNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    @Test("portable build: the platform layer is ckplatform_posix.h (.ci/run checks this passes)",
          .enabled(if: ckplat_portable() != 0))
    func portableLayer() {
        #expect(ckplat_thread_is_runnable(ckplat_thread_id()) == -1)
        #expect(ckplat_has_cgroups() == 0)
        #expect(ckplat_cgroup_root() == nil)
        var buffer = [CChar](repeating: 0, count: 256)
        #expect(ckplat_read_cgroup_membership(&buffer, buffer.count) == -1)
        #expect(ckplat_read_cgroup_file("/cpu.max", &buffer, buffer.count) == -1)
        #expect(ckplat_limit_affinity(1) == ENOTSUP)
    }

    @Test("Linux build: the platform layer is ckplatform_linux.h", .enabled(if: ckplat_portable() == 0))
    func linuxLayer() {
        #expect(ckplat_thread_is_runnable(ckplat_thread_id()) == 1)  // this thread is running
        #expect(ckplat_has_cgroups() == 1)
        var buffer = [CChar](repeating: 0, count: 4096)
        #expect(ckplat_read_cgroup_membership(&buffer, buffer.count) > 0)  // every process has one
        #expect(ckplat_executable_path(&buffer, buffer.count) == 0 && buffer[0] == 0x2F)  // "/..."
        #expect(ckplat_resident_bytes() > 0)
    }

    @Test("a wait whose word already differs returns EAGAIN at once")
    func waitOnChangedWord() {
        let word = Word(1)
        #expect(ckplat_wait(word.address, 0, 5_000_000_000) == EAGAIN)
    }

    @Test("a wait that a wake ends: the waiter returns long before its 30 s timeout")
    func waitEndedByWake() {
        let word = Word(0)
        let sleeping = Atomic<Bool>(false)
        let waited = Atomic<Int64>(-1)
        let waiter = JoinableThread {
            let start = PlatformTests.nanosecondsNow()
            sleeping.store(true, ordering: .sequentiallyConsistent)
            while word.atomic.pointee.load(ordering: .acquiring) == 0 {
                _ = ckplat_wait(word.address, 0, 30_000_000_000)
            }
            waited.store(PlatformTests.nanosecondsNow() - start, ordering: .sequentiallyConsistent)
        }
        #expect(waitUntil { sleeping.load(ordering: .sequentiallyConsistent) })
        usleep(20_000)  // most likely asleep in ckplat_wait by now; either way it must end
        word.atomic.pointee.store(1, ordering: .releasing)
        _ = ckplat_wake(word.address, 1)
        waiter.join()
        let nanoseconds = waited.load(ordering: .sequentiallyConsistent)
        #expect(nanoseconds >= 0 && nanoseconds < 10_000_000_000)
    }

    @Test("a timed wait that nobody wakes times out, after its timeout and not long after")
    func timedWaitTimesOut() {
        let word = Word(0)
        let timeout: Int64 = 30_000_000
        let start = PlatformTests.nanosecondsNow()
        var result: Int32 = 0
        // A spurious return (0 or EINTR) may come early: wait out the rest.
        while true {
            let left = timeout - (PlatformTests.nanosecondsNow() - start)
            if left <= 0 { break }
            result = ckplat_wait(word.address, 0, left)
            if result == ETIMEDOUT { break }
        }
        let elapsed = PlatformTests.nanosecondsNow() - start
        #expect(result == ETIMEDOUT)
        #expect(elapsed >= timeout - 1_000_000)  // clock granularity
        #expect(elapsed < 5_000_000_000)
    }

    @Test("a wake with nobody waiting is harmless, and a wake on another address wakes no one for good")
    func wakeWithoutWaiters() {
        let word = Word(0), other = Word(0)
        _ = ckplat_wake(word.address, 1)
        // The other word's waiter may see a spurious return (the portable layer broadcasts
        // to a shared bucket) but its word is unchanged, so the timed wait still ends by
        // timing out.
        var result: Int32 = 0
        let start = PlatformTests.nanosecondsNow()
        while result != ETIMEDOUT && PlatformTests.nanosecondsNow() - start < 2_000_000_000 {
            result = ckplat_wait(other.address, 0, 10_000_000)
        }
        #expect(result == ETIMEDOUT)
    }

    @Test("Parker: 500 hand-offs each way between two threads, on whichever platform layer")
    func parkerHandOffs() {
        let a = Parker(), b = Parker()
        let counter = Atomic<Int>(0)
        let other = JoinableThread {
            for _ in 0..<500 {
                b.park()
                counter.wrappingAdd(1, ordering: .relaxed)
                a.unpark()
            }
        }
        for round in 0..<500 {
            b.unpark()
            a.park()
            #expect(counter.load(ordering: .relaxed) == round + 1)
        }
        other.join()
    }

    @Test("CPU count: at least 1 online, and the usable count is at least 1 and at most online")
    func cpuCount() {
        #expect(ckplat_online_cpus() >= 1)
        let cpus = CPUAvailability.current()
        #expect(cpus.usableCPUs >= 1)
        #expect(cpus.usableCPUs <= max(cpus.onlineCPUs, cpus.affinityCPUs ?? 0))
    }

    @Test("affinity and pinning: a mask on Linux, none in the portable layer")
    func affinity() {
        if ckplat_portable() != 0 {
            #expect(ckplat_affinity_cpu_count() == -1)
            #expect(ckplat_affinity_nth_cpu(0) == -1)
            #expect(ckplat_pin_current_thread(0) == ENOTSUP)
            #expect(CPUAvailability.current().affinityCPUs == nil)
            #expect(CPUAvailability.current().cgroupQuotaSource == nil)
        } else {
            #expect(ckplat_affinity_cpu_count() >= 1)
            #expect(ckplat_affinity_nth_cpu(0) >= 0)
            #expect(ckplat_affinity_nth_cpu(ckplat_affinity_cpu_count()) == -1)
        }
    }

    @Test("machine and process figures: memory and resident set known on Linux and glibc")
    func machineFigures() {
        #expect(ckplat_memory_total() > 0)  // sysconf on both sides here
        #expect(ckplat_resident_bytes() > 0)  // Linux: statm; portable: getrusage's peak
        // glibc's mallinfo2 on both sides here; a sanitizer's own allocator reports nothing.
        if !runningUnderSanitizer() { #expect(ckplat_heap_in_use() > 0) }
        var buffer = [CChar](repeating: 0, count: 8)
        let model = ckplat_cpu_model(&buffer, buffer.count)  // cut to 7 bytes if longer
        #expect(model == 0 || model == ENOENT || model == ENOTSUP)
        if model == 0 { #expect(strlen(buffer) < 8) }
    }

    @Test("the ring epoch's mode: fenced in the portable layer (no membarrier)")
    func ringEpochMode() {
        if ckplat_portable() != 0 {
            #expect(ckplat_membarrier_register() == 0)
            #expect(!RingEpoch.isAsymmetric)
        }
    }

    @Test("thread ids: nonzero, stable on a thread, different on two live threads")
    func threadIDs() {
        let mine = ckplat_thread_id()
        #expect(mine != 0)
        #expect(ckplat_thread_id() == mine)
        let theirs = Atomic<Int64>(0)
        let thread = JoinableThread { theirs.store(ckplat_thread_id(), ordering: .sequentiallyConsistent) }
        thread.join()
        #expect(theirs.load(ordering: .sequentiallyConsistent) != 0)
        #expect(theirs.load(ordering: .sequentiallyConsistent) != mine)
    }

    @Test("thread names round-trip, cut to 15 bytes")
    func threadNames() {
        let names = Mutex<[String]>([])
        let thread = JoinableThread {
            func current() -> String {
                var buffer = [CChar](repeating: 0, count: 64)
                guard ckplat_get_thread_name(&buffer, buffer.count) == 0 else { return "<error>" }
                return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            _ = ckplat_set_thread_name("plat-test")
            let short = current()
            _ = ckplat_set_thread_name("platform-test-long-name")
            let long = current()
            names.withLock { $0 = [short, long] }
        }
        thread.join()
        #expect(names.withLock { $0 } == ["plat-test", "platform-test-l"])
    }

    @Test("page size: a power of two, at least 4 KiB; heap block size covers the object")
    func memory() {
        let page = ckplat_page_size()
        #expect(page >= 4096 && page & (page - 1) == 0)
        final class Box { var a = 0, b = 0, c = 0 }
        let box = Box()
        withExtendedLifetime(box) { #expect(heapBlockSize(of: box) >= 16 + 3 * 8) }
    }
}
