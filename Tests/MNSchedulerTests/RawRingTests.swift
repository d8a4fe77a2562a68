import Testing
import CConcurrencyKit
@testable import MNScheduler

@Suite struct RawRingTests {
    @Test("a capacity that is not a power of two of at least 4 is refused with a message naming it")
    func badCapacity() {
        for bad in [0, 1, 2, 3, 5, 6, 100, -8] {
            #expect(throws: RingCapacityError(requested: bad)) { try RawRing.validate(capacity: bad) }
        }
        #expect(RingCapacityError(requested: 6).description.contains("6"))
        for good in [4, 8, 1024] { #expect(throws: Never.self) { try RawRing.validate(capacity: good) } }
    }

    @Test("a ring holds capacity minus one entries, in FIFO order")
    func holdsCapacityMinusOne() {
        let ring = RawRing(capacity: 8)
        defer { ring.deallocate() }
        for i in 1...7 { #expect(ring.enqueueMultiProducer(UnsafeMutableRawPointer(bitPattern: i)!)) }
        #expect(!ring.enqueueMultiProducer(UnsafeMutableRawPointer(bitPattern: 8)!))
        #expect(ring.count == 7)
        for i in 1...7 { #expect(ring.dequeueSingleConsumer() == UnsafeMutableRawPointer(bitPattern: i)) }
        #expect(ring.dequeueSingleConsumer() == nil)
    }

    @Test("a mailbox ring hands out an entry only once it is published, in ticket order, lap after lap, whatever order producers publish in")
    func mailboxRingPublishesPerEntry() throws {
        #expect(RawRing.markBytes == Int(CKSHIM_RING_MARK_BYTES))
        let ring = try RawRing(tryMailboxCapacity: 4, slotBytes: 8)
        defer { ring.deallocate() }
        var head = ring.consumerHeadSingleConsumer
        var next: UInt = 0
        // Many laps: a mark left by an earlier lap, or the initial one, never reads as published.
        for lap in 0..<100 {
            var claimed: [(slot: UnsafeMutableRawPointer, ticket: UInt32, value: UInt)] = []
            for _ in 0..<3 {  // capacity − 1
                var ticket: UInt32 = 0
                let slot = try #require(ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket))
                slot.storeBytes(of: next, as: UInt.self)
                claimed.append((slot, ticket, next))
                next += 1
            }
            var ticket: UInt32 = 0
            #expect(ring.reserveMultiProducer(slotBytes: 8, ticket: &ticket) == nil, "lap \(lap): full")
            #expect(ring.claimedCount == 3)
            // The last claim publishes first, then the first: the consumer takes the first
            // only, then waits at the unpublished second.
            ring.publishMultiProducer(slot: claimed[2].slot, ticket: claimed[2].ticket)
            #expect(ring.peekSingleConsumer(at: head, slotBytes: 8) == nil, "lap \(lap): the head entry is not published")
            #expect(!ring.headIsReadySingleConsumer(slotBytes: 8))
            ring.publishMultiProducer(slot: claimed[0].slot, ticket: claimed[0].ticket)
            var taken: [UInt] = []
            while let slot = ring.peekSingleConsumer(at: head, slotBytes: 8) {
                taken.append(slot.load(as: UInt.self))
                head &+= 1
                ring.releaseSingleConsumer(to: head)
            }
            #expect(taken == [claimed[0].value], "lap \(lap)")
            ring.publishMultiProducer(slot: claimed[1].slot, ticket: claimed[1].ticket)
            while let slot = ring.peekSingleConsumer(at: head, slotBytes: 8) {
                taken.append(slot.load(as: UInt.self))
                head &+= 1
                ring.releaseSingleConsumer(to: head)
            }
            #expect(taken == claimed.map(\.value), "lap \(lap)")
            #expect(ring.isQuiescent && ring.claimedCount == 0)
        }
    }

    @Test("a sealed mailbox ring refuses every claim and counts nothing claimed; unsealed, it takes claims again")
    func sealedMailboxRing() throws {
        let ring = try RawRing(tryMailboxCapacity: 8, slotBytes: 16)
        defer { ring.deallocate() }
        #expect(ring.seal())
        var ticket: UInt32 = 0
        #expect(ring.reserveMultiProducer(slotBytes: 16, ticket: &ticket) == nil)
        #expect(ring.claimedCount == 0)
        ring.unseal()
        #expect(ring.reserveMultiProducer(slotBytes: 16, ticket: &ticket) != nil)
        #expect(ring.claimedCount == 1 && !ring.seal())
    }
}
