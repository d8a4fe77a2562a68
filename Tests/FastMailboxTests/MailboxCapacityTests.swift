import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import FastMailbox
import MNScheduler
import FastMailboxTestSupport

/// A mailbox capacity is bounded, and a ring that cannot be allocated
/// is an error the caller can report, not a trap.
@Suite("MailboxCapacity", .serialized) struct MailboxCapacityTests {
    @Test("a mailbox capacity of 2^30 is refused with an error naming the value and the range 4...2^20")
    func hugeMailboxCapacityIsRefused() {
        #expect(throws: MailboxError.invalidCapacity(1 << 30)) { try Mailbox<Int>(capacity: 1 << 30) }
        #expect(throws: MailboxError.invalidCapacity(1 << 21)) { try Mailbox<Int>(capacity: 1 << 21) }
        let text = MailboxError.invalidCapacity(1 << 30).description
        #expect(text.contains("1073741824"), "names the value: \(text)")
        #expect(text.contains("between 4 and 1048576"), "names the range: \(text)")
    }

    @Test("spawn with a mailbox capacity of 2^30 throws invalidMailboxCapacity instead of asking for 8 GiB on the first tell")
    func spawnWithHugeMailboxCapacityThrows() throws {
        let system = try makeSystem()
        defer { _ = system.shutdown() }
        #expect(throws: ActorSystemError.invalidMailboxCapacity(1 << 30)) {
            try system.spawn(options: SpawnOptions(mailboxCapacity: 1 << 30)) { Counter() }
        }
        #expect(ActorSystemError.invalidMailboxCapacity(1 << 30).description.contains("1048576"))
    }

    @Test("the largest mailbox capacity, 2^20, is accepted and its ring can be reserved up front")
    func largestMailboxCapacityIsAccepted() throws {
        let mailbox = try Mailbox<Int>(capacity: 1 << 20)
        #expect(mailbox.ringBytes == 0)
        try mailbox.reserveRing()
        #expect(mailbox.ringBytes == RawRing.mailboxAllocationSize(capacity: 1 << 20, slotBytes: 8))
        #expect(mailbox.send(42).becameNonEmpty)
        var seen: [Int] = []
        #expect(mailbox.drain(max: 10) { seen.append($0) } == .empty)
        #expect(seen == [42])
    }

    @Test("a mailbox whose ring cannot be allocated reports ringAllocationFailed instead of trapping",
          .enabled(if: !runningUnderSanitizer(), "sanitizers own the allocator and abort on a limit"))
    func ringAllocationFailureIsReported() async {
        await #expect(processExitsWith: .success) {
            let mailbox = try! Mailbox<Int>(capacity: 1 << 20)  // an 8 MiB ring
            limitDataSegment(headroomBytes: 2 << 20)
            do {
                try mailbox.reserveRing()
                exit(3)  // allocated despite the limit: the test proves nothing
            } catch let error as MailboxError {
                guard case .ringAllocationFailed(capacity: 1 << 20, bytes: let bytes) = error else { exit(4) }
                exit(bytes > 8 << 20 && error.description.contains("\(bytes) bytes") ? 0 : 5)
            } catch {
                exit(6)
            }
        }
    }

    @Test("spawn with a large mailbox under a memory limit throws mailboxAllocationFailed instead of trapping at the first tell",
          .enabled(if: !runningUnderSanitizer(), "sanitizers own the allocator and abort on a limit"))
    func spawnReportsRingAllocationFailure() async {
        await #expect(processExitsWith: .success) {
            let system = try! ActorSystem(name: "limited")
            limitDataSegment(headroomBytes: 2 << 20)
            do throws(ActorSystemError) {
                _ = try system.spawn(options: SpawnOptions(name: "big", mailboxCapacity: 1 << 20)) { (_: Int, _) in }
                exit(3)  // allocated despite the limit: the test proves nothing
            } catch {
                guard case .mailboxAllocationFailed(capacity: 1 << 20, bytes: _) = error else { exit(4) }
                exit(0)
            }
        }
    }

    @Test("ActorSystemError.mailboxAllocationFailed names the capacity and the bytes")
    func allocationErrorText() {
        let text = ActorSystemError.mailboxAllocationFailed(capacity: 1 << 20, bytes: 8_388_800).description
        #expect(text.contains("1048576") && text.contains("8388800 bytes"), "\(text)")
    }
}
