import Testing
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
}
