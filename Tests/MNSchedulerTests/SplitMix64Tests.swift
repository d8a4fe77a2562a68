import XCTest
@testable import MNScheduler

final class SplitMix64Tests: XCTestCase {
    /// The reference implementation's first outputs for seed 0 (Vigna's splitmix64.c).
    func testMatchesTheReferenceSequence() {
        var random = SplitMix64(seed: 0)
        XCTAssertEqual(random.next(), 0xE220_A839_7B1D_CDAF)
        XCTAssertEqual(random.next(), 0x6E78_9E6A_A1B9_65F4)
        XCTAssertEqual(random.next(), 0x06C4_5D18_8009_454F)
    }

    func testSameSeedSameSequenceDifferentSeedDifferentSequence() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42), c = SplitMix64(seed: 43)
        let first = (0..<100).map { _ in a.next() }
        XCTAssertEqual(first, (0..<100).map { _ in b.next() })
        XCTAssertNotEqual(first, (0..<100).map { _ in c.next() })
    }

    func testNextBelowStaysInRangeAndCoversIt() {
        var random = SplitMix64(seed: 7)
        var seen = Set<Int>()
        for _ in 0..<1_000 {
            let value = random.next(below: 5)
            XCTAssertTrue((0..<5).contains(value))
            seen.insert(value)
        }
        XCTAssertEqual(seen, [0, 1, 2, 3, 4])
        XCTAssertEqual(random.next(below: 1), 0)
        XCTAssertEqual(random.next(below: 0), 0)
        XCTAssertEqual(random.next(below: -3), 0)
    }
}
