import Testing
@testable import MNScheduler

@Suite struct RunQueueTests {
    static func word(_ i: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: i + 1)! }

    @Test("a thief takes half (rounded up) of the victim's queue, oldest first, and runs the first")
    func stealHalf() {
        let victim = RunQueue(capacity: 16), thief = RunQueue(capacity: 16)
        defer { victim.deallocate(); thief.deallocate() }
        for i in 0..<7 { #expect(victim.push(Self.word(i))) }
        #expect(victim.stealHalf(into: thief) == Self.word(0))
        #expect(thief.count == 3)
        #expect(victim.count == 3)
        for i in 1...3 { #expect(thief.pop() == Self.word(i)) }
        for i in 4...6 { #expect(victim.pop() == Self.word(i)) }
        #expect(victim.stealHalf(into: thief) == nil)
    }

    @Test("a full local queue refuses a push (the worker then spills to the injection queue)")
    func fullRefuses() {
        let queue = RunQueue(capacity: 4)
        defer { queue.deallocate() }
        for i in 0..<3 { #expect(queue.push(Self.word(i))) }
        #expect(!queue.push(Self.word(3)))
        #expect(queue.usableCapacity == 3)
    }
}
