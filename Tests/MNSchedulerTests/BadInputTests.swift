import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import MNScheduler

/// Bad input must fail cleanly, never trap.
@Suite struct BadInputTests {
    @Test("a ring capacity above 2^20 is refused with an error naming the value and the range")
    func ringCapacityAboveMaximumIsRefused() {
        #expect(RawRing.maximumCapacity == 1 << 20)
        #expect(throws: RingCapacityError(requested: 1 << 30)) { try RawRing.validate(capacity: 1 << 30) }
        #expect(throws: RingCapacityError(requested: 1 << 21)) { try MPSCQueueBox(capacity: 1 << 21) }
        let text = RingCapacityError(requested: 1 << 30).description
        #expect(text.contains("1073741824") && text.contains("4") && text.contains("1048576"))
        #expect((try? MPSCQueue(capacity: 1 << 20)) != nil)
    }

    @Test("a ring whose memory cannot be allocated is a thrown error naming its size, not a trap")
    func ringAllocationFailureThrows() throws {
        #expect(throws: RingAllocationError(capacity: 1024, bytes: RawRing.allocationSize(capacity: 1024))) {
            _ = try RawRing(tryCapacity: 1024, allocate: { _ in nil })
        }
        #expect(RingAllocationError(capacity: 1024, bytes: 8384).description.contains("8384 bytes"))
        let ring = try RawRing(tryCapacity: 8)
        defer { ring.deallocate() }
        #expect(ring.capacity == 8)
    }

    @Test("reserveRing allocates a queue's ring up front, once, and later sends use it")
    func reserveRingAllocatesOnce() throws {
        let queue = try MPSCQueueBox(capacity: 16)
        #expect(queue.ringBytes == 0)
        try queue.reserveRing()
        let block = queue.ringBlock
        #expect(block != nil && queue.ringBytes == RawRing.mailboxAllocationSize(capacity: 16, slotBytes: 8))
        try queue.reserveRing()
        #expect(queue.ringBlock == block)
        #expect(queue.enqueue(word: 5) == .accepted(becameNonEmpty: true))
        var seen: [UInt] = []
        #expect(queue.drain(max: 10) { seen.append($0) } == .empty)
        #expect(seen == [5])
    }

    @Test("reserveRing under a memory limit throws RingAllocationError instead of trapping",
          .enabled(if: !runningUnderSanitizer(), "sanitizers own the allocator and abort on a limit"))
    func reserveRingUnderMemoryLimitThrows() async {
        await #expect(processExitsWith: .success) {
            let queue = try! MPSCQueue(capacity: 1 << 20)  // an 8 MiB ring
            limitDataSegment(headroomBytes: 2 << 20)
            do {
                try queue.reserveRing()
                exit(3)  // allocated despite the limit: the test proves nothing
            } catch let error as RingAllocationError {
                exit(error.capacity == 1 << 20 ? 0 : 4)
            } catch {
                exit(5)
            }
        }
    }

    @Test("cgroup quotas that are not finite, positive, integral numbers are rejected by the parser")
    func nonFiniteCgroupQuotasAreRejected() {
        for text in ["1e400 100000", "inf 100000", "nan 100000", "-100000 100000", "1.5e5 100000",
                     "100000 0", "100000 inf", "100000 -1", "100000 1e400", "0 100000"] {
            #expect(CPUAvailability.parseCgroupV2CPUMax(text) == nil, "cpu.max \(text)")
        }
        for (quota, period) in [("1e400", "100000"), ("inf", "100000"), ("nan", "100000"),
                                ("-5", "100000"), ("100000", "nan"), ("100000", "0")] {
            #expect(CPUAvailability.parseCgroupV1(quota: quota, period: period) == nil, "v1 \(quota) \(period)")
        }
        // Absurd but finite: more CPUs than any machine has is "no limit" as far as we care.
        #expect(CPUAvailability.parseCgroupV2CPUMax("18446744073709551615 1") == nil)
        // The real formats still parse.
        #expect(CPUAvailability.parseCgroupV2CPUMax("150000 100000\n") == 1.5)
        #expect(CPUAvailability.parseCgroupV1(quota: "250000\n", period: "100000\n") == 2.5)
    }

    @Test("usableCPUs ignores a non-finite or absurd quota and falls back to the affinity mask")
    func usableCPUsSurvivesBadQuota() {
        for quota in [Double.infinity, -Double.infinity, .nan, 1e300, -3, 0] {
            let cpus = CPUAvailability(affinityCPUs: 4, cgroupQuotaCPUs: quota, onlineCPUs: 8)
            #expect(cpus.usableCPUs == 4, "quota \(quota)")
        }
        #expect(CPUAvailability(affinityCPUs: 4, cgroupQuotaCPUs: 1.5, onlineCPUs: 8).usableCPUs == 2)
    }
}
