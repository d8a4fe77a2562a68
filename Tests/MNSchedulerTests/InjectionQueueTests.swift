import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

@Suite struct InjectionQueueTests {
    static func word(_ producer: Int, _ i: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: (producer + 1) << 32 | (i + 1))!
    }

    @Test("entries beyond the ring spill in order and come back in FIFO order")
    func spillKeepsOrder() {
        let queue = InjectionQueue(capacity: 4)
        for i in 0..<100 { queue.push(Self.word(0, i)) }
        #expect(queue.count == 100)
        for i in 0..<100 { #expect(queue.pop() == Self.word(0, i)) }
        #expect(queue.pop() == nil)
        #expect(queue.isEmpty)
        queue.push(contentsOf: (0..<10).map { Self.word(1, $0) })
        for i in 0..<10 { #expect(queue.pop() == Self.word(1, i)) }
    }

    @Test("stress: 4 producers and 2 consumers through a 4-slot ring: nothing lost, per-producer order kept")
    func concurrentProducersKeepOrder() {
        let queue = InjectionQueue(capacity: 4)
        let perProducer = 20_000
        let taken = Atomic<Int>(0)
        let orderViolations = Atomic<Int>(0)
        onThreads(6) { t in
            if t < 4 {
                for i in 0..<perProducer { queue.push(Self.word(t, i)) }
            } else {
                var last = [Int](repeating: 0, count: 4)
                while taken.load(ordering: .relaxed) < 4 * perProducer {
                    guard let p = queue.pop() else { continue }
                    let bits = Int(bitPattern: p)
                    let producer = (bits >> 32) - 1, i = bits & 0xFFFF_FFFF
                    if i <= last[producer] { orderViolations.wrappingAdd(1, ordering: .relaxed) }
                    last[producer] = i
                    taken.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
        #expect(taken.load(ordering: .relaxed) == 4 * perProducer)
        #expect(orderViolations.load(ordering: .relaxed) == 0)
        #expect(queue.pop() == nil)
    }
}
