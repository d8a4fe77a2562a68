import Testing
import Synchronization
import MallocCounter
@testable import FastMailbox
import FastMailboxTestSupport
import MNScheduler

struct Payload: Sendable, Equatable { var a: Int; var b: Int; var text: String }
/// An enum whose payloads carry a class reference and a String: several words, one slot.
enum Envelope: Sendable { case tracked(Tracked, Int, Int), text(String, Int, Int), none }
/// Ten words and a reference: over RawRing.maximumSlotBytes, so it travels boxed.
struct Big: Sendable { var words: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int); var tracked: Tracked? }
enum Command: Sendable, Equatable { case start, stop, pause }

@Suite("Mailbox", .serialized) struct MailboxTests {
    func drainAll<M>(_ mailbox: Mailbox<M>) -> [M] {
        var out: [M] = []
        while mailbox.drain(max: 7, { out.append($0) }) == .more {}
        return out
    }

    @Test("messages from one sender arrive in the order sent")
    func fifo() throws {
        let mailbox = try Mailbox<Int>(capacity: 1024)
        for i in 0..<500 { #expect(mailbox.send(i).isAccepted) }
        #expect(drainAll(mailbox) == Array(0..<500))
    }

    @Test("a capacity that is not a power of two of at least 4 is refused with an error naming it")
    func badCapacity() {
        for bad in [0, 1, 2, 3, 6, 1000, -4] {
            #expect(throws: MailboxError.invalidCapacity(bad)) { try Mailbox<Int>(capacity: bad) }
        }
        #expect(MailboxError.invalidCapacity(6).description.contains("6"))
        #expect(MailboxError.invalidCapacity(6).description.contains("power of two"))
        #expect(throws: Never.self) { try Mailbox<Int>(capacity: 4) }
    }

    @Test("only the send that makes an empty mailbox non-empty is told so")
    func becameNonEmpty() throws {
        let mailbox = try Mailbox<Int>(capacity: 8)
        #expect(mailbox.send(1).becameNonEmpty)
        #expect(!mailbox.send(2).becameNonEmpty)
        #expect(!mailbox.send(3).becameNonEmpty)
        var seen: [Int] = []
        #expect(mailbox.drain(max: 2) { seen.append($0) } == .more)
        #expect(!mailbox.send(4).becameNonEmpty, "still non-empty: one message left")
        #expect(mailbox.drain(max: 10) { seen.append($0) } == .empty)
        #expect(seen == [1, 2, 3, 4])
        #expect(mailbox.send(5).becameNonEmpty, "empty again: this send must schedule the consumer")
    }

    @Test("a full ring overflows in order, loses nothing, and returns to the ring once drained")
    func fullRingOverflowsInOrder() throws {
        let mailbox = try Mailbox<Int>(capacity: 4)
        for i in 0..<100 { #expect(mailbox.send(i).isAccepted) }
        #expect(mailbox.overflowSendCount == 97, "the ring holds capacity − 1 = 3")
        #expect(mailbox.count == 100)
        #expect(drainAll(mailbox) == Array(0..<100))
        for i in 100..<103 { #expect(mailbox.send(i).isAccepted) }
        #expect(mailbox.overflowSendCount == 97, "after draining, sends use the ring again")
        #expect(drainAll(mailbox) == [100, 101, 102])
    }

    @Test("trySend on a full ring hands the message back and enqueues nothing")
    func trySendFull() throws {
        let mailbox = try Mailbox<Int>(capacity: 4)
        for i in 0..<3 { guard case .accepted = mailbox.trySend(i) else { Issue.record("refused \(i)"); return } }
        guard case .full(let back) = mailbox.trySend(99) else { Issue.record("expected .full"); return }
        #expect(back == 99)
        #expect(mailbox.count == 3)
        #expect(drainAll(mailbox) == [0, 1, 2])
    }

    @Test("after close a send is refused and hands the message back, and what was inside can still be drained")
    func close() throws {
        let mailbox = try Mailbox<Payload>(capacity: 8)
        _ = mailbox.send(Payload(a: 1, b: 1, text: "one"))
        _ = mailbox.send(Payload(a: 2, b: 2, text: "two"))
        mailbox.close()
        #expect(mailbox.isClosed)
        guard case .closed(let back) = mailbox.send(Payload(a: 3, b: 3, text: "three")) else {
            Issue.record("a send after close was accepted"); return
        }
        #expect(back.text == "three")
        guard case .closed = mailbox.trySend(Payload(a: 4, b: 4, text: "four")) else { Issue.record("trySend accepted"); return }
        #expect(mailbox.closeAndDrain().map(\.text) == ["one", "two"])
        #expect(mailbox.count == 0)
    }

    @Test("drain hands out at most max messages per batch and says more remain")
    func batchLimit() throws {
        let mailbox = try Mailbox<Int>(capacity: 64)
        for i in 0..<10 { _ = mailbox.send(i) }
        var batch: [Int] = []
        #expect(mailbox.drain(max: 4) { batch.append($0) } == .more)
        #expect(batch == [0, 1, 2, 3])
        #expect(mailbox.drain(max: 100) { batch.append($0) } == .empty)
        #expect(batch == Array(0..<10))
    }

    @Test("a drain resumes an overflow chunk where the last one stopped, counts each message before handing it out, and sends made inside it come after what it took")
    func overflowRunsResumeInOrderAndCount() throws {
        let mailbox = try Mailbox<Int>(capacity: 4)
        let n = 100  // 3 in the ring, 97 in overflow chunks of 32, 64 and 1,024
        for i in 0..<n { _ = mailbox.send(i) }
        var out: [Int] = []
        var sent = n
        var countsExact = true
        while mailbox.drain(max: 5, { value in
            out.append(value)
            // Counted before the hand-off: this one is taken, the rest still counted inside.
            if mailbox.box.queue.dequeuedCount != out.count || mailbox.count != sent - out.count { countsExact = false }
            if value < n { _ = mailbox.send(1_000 + value); sent += 1 }  // behind everything sent before
        }) == .more {}
        #expect(out == Array(0..<n) + Array(1_000..<1_000 + n), "one sender's order across ring, overflow runs and drains")
        #expect(countsExact, "dequeuedCount and count exact at every hand-off")
        #expect(mailbox.box.overflowChunksHeld == 0, "every chunk freed once drained")
    }

    @Test("class, trivial, enum, struct and big (boxed) messages round-trip and none leaks")
    func encodings() throws {
        #expect(MessageEncoding<Tracked>.itemBytes == 8 && !MessageEncoding<Tracked>.isBoxed)
        #expect(MessageEncoding<Int>.itemBytes == 8)
        #expect(MessageEncoding<Command>.itemBytes == 1, "a one-byte enum travels in one byte of an 8-byte slot")
        #expect(MessageEncoding<Payload>.itemBytes == 32 && !MessageEncoding<Payload>.isBoxed)
        #expect(MessageEncoding<Envelope>.itemBytes == MemoryLayout<Envelope>.size && !MessageEncoding<Envelope>.isBoxed)
        #expect(MessageEncoding<SIMD4<Float>>.isBoxed, "16-byte alignment does not fit an 8-byte-aligned slot")
        #expect(MessageEncoding<Big>.isBoxed && MessageEncoding<Big>.itemBytes == 8)
        let before = Tracked.live.load(ordering: .relaxed)
        do {
            let objects = try Mailbox<Tracked>(capacity: 4)
            for i in 0..<20 { _ = objects.send(Tracked(i)) }
            var got: [Int] = []
            _ = objects.drain(max: 5) { got.append($0.value) }
            #expect(got == [0, 1, 2, 3, 4])
            // the other 15 are still inside when the mailbox is released: deinit frees them
        }
        #expect(Tracked.live.load(ordering: .relaxed) == before, "a mailbox released with messages inside must release them")
        let commands = try Mailbox<Command>(capacity: 4)
        for c in [Command.start, .pause, .stop] { _ = commands.send(c) }
        #expect(drainAll(commands) == [.start, .pause, .stop])
        let zeros = try Mailbox<Int>(capacity: 4)
        _ = zeros.send(0); _ = zeros.send(0)
        #expect(drainAll(zeros) == [0, 0], "a zero word is a message, not an empty slot")
        do {
            // Ring, overflow (chunk slots) and deinit, for an in-slot enum and a boxed struct.
            let envelopes = try Mailbox<Envelope>(capacity: 4)
            let bigs = try Mailbox<Big>(capacity: 4)
            for i in 0..<12 {
                _ = envelopes.send(i % 2 == 0 ? .tracked(Tracked(i), i, -i) : .text("message \(i) with a heap string", i, 0))
                _ = bigs.send(Big(words: (i, 1, 2, 3, 4, 5, 6, 7, 8, 9), tracked: Tracked(i)))
            }
            var order: [Int] = []
            _ = envelopes.drain(max: 8) { envelope in
                switch envelope {
                case .tracked(let t, let i, let j): if t.value == i, j == -i { order.append(i) }
                case .text(let text, let i, _): if text == "message \(i) with a heap string" { order.append(i) }
                case .none: break
                }
            }
            _ = bigs.drain(max: 8) { big in if big.tracked?.value == big.words.0 { order.append(100 + big.words.0) } }
            #expect(order == Array(0..<8) + (100..<108), "payloads intact and in order across ring and overflow")
            #expect(envelopes.overflowSendCount > 0 && bigs.overflowSendCount > 0)
            // 4 + 4 still inside when released: deinit destroys them
        }
        #expect(Tracked.live.load(ordering: .relaxed) == before, "every payload released exactly once")
    }

    @Test("a message of at most 64 bytes costs no allocation (class, Int, a struct with a String, a 40-byte enum); a bigger one exactly one")
    func allocationsPerMessage() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        let n = 1000
        func allocations(_ body: () -> Void) -> Double {
            let start = malloc_counter_thread_allocations()
            body()
            return Double(malloc_counter_thread_allocations() - start) / Double(n)
        }
        let ints = try Mailbox<Int>(capacity: 2048)
        _ = ints.send(-1); _ = ints.drain(max: 1) { _ in }  // allocate the ring outside the count
        #expect(allocations { for i in 0..<n { _ = ints.send(i) } } == 0)
        #expect(allocations { _ = ints.drain(max: n) { _ in } } == 0)

        let object = Tracked(7)
        let objects = try Mailbox<Tracked>(capacity: 2048)
        _ = objects.send(object); _ = objects.drain(max: 1) { _ in }
        #expect(allocations { for _ in 0..<n { _ = objects.send(object) } } == 0)
        #expect(allocations { _ = objects.drain(max: n) { _ in } } == 0)

        let payloads = try Mailbox<Payload>(capacity: 2048)
        let p = Payload(a: 1, b: 2, text: "a string long enough to live on the heap")
        _ = payloads.send(p); _ = payloads.drain(max: 1) { _ in }
        #expect(allocations { for _ in 0..<n { _ = payloads.send(p) } } == 0)
        #expect(allocations { _ = payloads.drain(max: n) { _ in } } == 0)

        let envelopes = try Mailbox<Envelope>(capacity: 2048)
        _ = envelopes.send(.none); _ = envelopes.drain(max: 1) { _ in }
        #expect(MemoryLayout<Envelope>.stride == 40)
        #expect(allocations { for i in 0..<n { _ = envelopes.send(.tracked(object, i, i)) } } == 0)
        #expect(allocations { _ = envelopes.drain(max: n) { _ in } } == 0)

        let bigs = try Mailbox<Big>(capacity: 2048)
        _ = bigs.send(Big(words: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0), tracked: nil)); _ = bigs.drain(max: 1) { _ in }
        #expect(allocations { for i in 0..<n { _ = bigs.send(Big(words: (i, 0, 0, 0, 0, 0, 0, 0, 0, 0), tracked: object)) } } == 1)
        #expect(allocations { _ = bigs.drain(max: n) { _ in } } == 0)
    }

    @Test("messages of every odd size up to 32 bytes arrive intact, through the ring and the overflow (the item copy's overlapping words)")
    func oddSizesIntact() throws {
        func roundTrip<M: Sendable>(_ values: [M], _ same: (M, M) -> Bool) throws -> Bool {
            let mailbox = try Mailbox<M>(capacity: 4)  // most of them overflow
            for value in values { _ = mailbox.send(value) }
            let out = drainAll(mailbox)
            return out.count == values.count && zip(out, values).allSatisfy(same)
        }
        let n = 64
        #expect(MemoryLayout<(Int, UInt8)>.size == 9 && MemoryLayout<(Int32, UInt8)>.size == 5)
        let s1: [UInt8] = (0..<n).map { i in UInt8(i) }
        let s3: [(UInt16, UInt8)] = (0..<n).map { i in (UInt16(i * 257), UInt8(i)) }
        let s5: [(Int32, UInt8)] = (0..<n).map { i in (Int32(i * 65_537), UInt8(i)) }
        let s7: [(Int32, UInt16, UInt8)] = (0..<n).map { i in (Int32(-i), UInt16(i), UInt8(255 - i)) }
        let s9: [(Int, UInt8)] = (0..<n).map { i in (i &* 0x0101_0101_0101_0101, UInt8(i)) }
        let s14: [(Int, Int32, UInt16)] = (0..<n).map { i in (i, Int32(i) &* 3, UInt16(i)) }
        let s17: [(Int, Int, UInt8)] = (0..<n).map { i in (i, -i, UInt8(i)) }
        let s27: [(Int, Int, Int, UInt16, UInt8)] = (0..<n).map { i in (i, -i, i << 3, UInt16(i), UInt8(i)) }
        let s31: [(Int, Int, Int, Int32, UInt16, UInt8)] = (0..<n).map { i in (i, -i, i << 3, Int32(i), UInt16(i), UInt8(i)) }
        #expect(MemoryLayout<(Int, Int, Int, Int32, UInt16, UInt8)>.size == 31)
        #expect(try roundTrip(s1) { $0 == $1 })
        #expect(try roundTrip(s3) { $0 == $1 })
        #expect(try roundTrip(s5) { $0 == $1 })
        #expect(try roundTrip(s7) { $0 == $1 })
        #expect(try roundTrip(s9) { $0 == $1 })
        #expect(try roundTrip(s14) { $0 == $1 })
        #expect(try roundTrip(s17) { $0 == $1 })
        #expect(try roundTrip(s27) { $0 == $1 })
        #expect(try roundTrip(s31) { $0 == $1 })
    }

    @Test("a burst past the ring costs one allocation per overflow chunk, not per message, and keeps nothing once drained")
    func overflowAllocatesPerChunk() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        let n = 100_000
        let object = Tracked(3)
        let envelopes = try Mailbox<Envelope>(capacity: 4)
        _ = envelopes.send(.none); _ = envelopes.drain(max: 1) { _ in }  // the ring, outside the count
        let start = malloc_counter_thread_allocations()
        for i in 0..<n { _ = envelopes.send(.tracked(object, i, -i)) }
        let sendAllocations = malloc_counter_thread_allocations() - start
        // 3 go to the ring, the rest into chunks of 32, 64, ... 1,024: about n / 1,024 of them.
        #expect(envelopes.overflowSendCount == n - 3)
        #expect(sendAllocations <= n / 1_024 + 8, "\(sendAllocations) allocations for \(n) overflowing sends")
        var expected = 0
        var inOrder = true
        let drainStart = malloc_counter_thread_allocations()
        while envelopes.drain(max: 10_000, { envelope in
            if case .tracked(let t, let i, let j) = envelope, t === object, i == expected, j == -i { expected += 1 } else { inOrder = false }
        }) == .more {}
        #expect(malloc_counter_thread_allocations() == drainStart, "draining allocates nothing")
        #expect(inOrder && expected == n)
        #expect(envelopes.box.overflowChunksHeld == 0, "every chunk freed once drained")
    }

    @Test("messages still inside are released once, when the last copy of the mailbox goes, not before")
    func lastCopyReleasesPayloads() throws {
        let before = Tracked.live.load(ordering: .relaxed)
        var copy: Mailbox<Tracked>?
        do {
            let mailbox = try Mailbox<Tracked>(capacity: 4)
            for i in 0..<10 { _ = mailbox.send(Tracked(i)) }  // 3 in the ring, 7 in the overflow
            copy = mailbox
        }
        #expect(Tracked.live.load(ordering: .relaxed) == before + 10, "a copy is the same mailbox: nothing released yet")
        var taken: [Int] = []
        _ = copy!.drain(max: 4) { taken.append($0.value) }
        #expect(taken == [0, 1, 2, 3], "the copy drains what the original received")
        #expect(Tracked.live.load(ordering: .relaxed) == before + 6)
        copy = nil
        #expect(Tracked.live.load(ordering: .relaxed) == before, "the 6 left released with the last copy, exactly once")
    }

    @Test("a ring allocated by reserveRing() or by trySend also releases what is left inside")
    func everyRingAllocationRecordsTheType() throws {
        let before = Tracked.live.load(ordering: .relaxed)
        do {
            let reserved = try Mailbox<Tracked>(capacity: 8)
            try reserved.reserveRing()
            let tried = try Mailbox<Tracked>(capacity: 8)
            let boxed = try Mailbox<Big>(capacity: 8)
            for i in 0..<5 {
                _ = reserved.send(Tracked(i))
                guard case .accepted = tried.trySend(Tracked(i)) else { Issue.record("trySend refused"); return }
                guard case .accepted = boxed.trySend(Big(words: (i, 0, 0, 0, 0, 0, 0, 0, 0, 0), tracked: Tracked(i))) else {
                    Issue.record("trySend refused"); return
                }
            }
            #expect(Tracked.live.load(ordering: .relaxed) == before + 15)
        }
        #expect(Tracked.live.load(ordering: .relaxed) == before, "every payload released once (boxes freed: ASan/LSan)")
    }

    @Test("an idle mailbox allocates no ring and stays small; the first send allocates it")
    func idleFootprint() throws {
        // The smallest of HeapSampling.count, all alive at once (see there: one mailbox's
        // figure depends on the allocator's history).
        let mailboxes = try (0..<HeapSampling.count).map { _ in try Mailbox<Int>(capacity: 1024) }
        let mailbox = mailboxes[0]
        let idleBytes = mailboxes.map(\.idleFootprintBytes).min()!
        #expect(mailboxes.allSatisfy { $0.ringBytes == 0 })
        #expect(idleBytes > 0)
        // One object, its queue (MPSCQueue.swift, "Where the fields live"): no wrapper
        // object around it, and no overflow fields or count in it.
        #expect(idleBytes <= 56, "idle mailbox costs \(idleBytes) bytes")
        _ = mailbox.send(1)
        #expect(mailbox.ringBytes == RawRing.headerBytes + 1024 * (8 + 8))  // ready marks and slots
    }
}
