import Testing
@testable import MNScheduler

@Suite struct SplitMix64Tests {
    @Test("seed 0 gives the reference implementation's first outputs (Vigna's splitmix64.c)")
    func matchesTheReferenceSequence() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
    }

    @Test("the same seed gives the same sequence, another seed another")
    func sameSeedSameSequence() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42), c = SplitMix64(seed: 43)
        let first = (0..<100).map { _ in a.next() }
        #expect(first == (0..<100).map { _ in b.next() })
        #expect(first != (0..<100).map { _ in c.next() })
    }

    @Test("next(below:) stays in range and covers it; bounds of 1 or less give 0")
    func nextBelowStaysInRange() {
        var random = SplitMix64(seed: 7)
        var seen = Set<Int>()
        for _ in 0..<1_000 {
            let value = random.next(below: 5)
            #expect((0..<5).contains(value))
            seen.insert(value)
        }
        #expect(seen == [0, 1, 2, 3, 4])
        #expect(random.next(below: 1) == 0)
        #expect(random.next(below: 0) == 0)
        #expect(random.next(below: -3) == 0)
    }
}
