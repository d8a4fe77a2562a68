import Dispatch
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

#if DEBUG  // the push and consume hooks are compiled out of release builds
extension InjectionQueueTests {
    @Test("a push paused between its claim and its publish stops no other push (J1)")
    func pausedPushStopsNoOtherPush() {
        let queue = InjectionQueue(capacity: 8)
        let gate = Gate()
        let secondDone = DispatchSemaphore(value: 0)
        let calls = Atomic<Int>(0)
        queue.pushHookForTesting = {
            if calls.wrappingAdd(1, ordering: .relaxed).oldValue == 0 { gate.pass() }
        }
        let first = JoinableThread { queue.push(Self.word(0, 0)) }
        #expect(gate.waitForArrivals(1))
        let second = JoinableThread { queue.push(Self.word(1, 0)); secondDone.signal() }
        let finished = secondDone.wait(timeout: .now() + 5) == .success
        gate.open()
        if !finished { secondDone.wait() }
        #expect(finished, "the second push waited for the paused one")
        first.join()
        second.join()
        var taken: Set<UInt> = []
        while let p = queue.pop() { taken.insert(UInt(bitPattern: p)) }
        #expect(taken == [UInt(bitPattern: Self.word(0, 0)), UInt(bitPattern: Self.word(1, 0))])
    }
}

/// Collects what a closed queue hands over.
private final class HandedOver: @unchecked Sendable {
    private let words = Mutex<[UInt]>([])
    func add(_ unit: UnsafeMutableRawPointer) { words.withLock { $0.append(UInt(bitPattern: unit)) } }
    var all: [UInt] { words.withLock { $0 } }
}

extension InjectionQueueTests {
    @Test("a push that claimed before close and publishes after it hands its entry over itself (J4)")
    func pushClaimedBeforeCloseIsHandedOver() {
        let queue = InjectionQueue(capacity: 8)
        let gate = Gate()
        queue.pushHookForTesting = { gate.pass() }
        let handed = HandedOver()
        let accepted = Atomic<Bool>(false)
        let producer = JoinableThread {
            if queue.pushUnlessClosed(Self.word(0, 0)) {
                accepted.store(true, ordering: .relaxed)
                atomicMemoryFence(ordering: .sequentiallyConsistent)  // SchedulerCore.notifyParked's
                queue.settleAfterPush()
            }
        }
        #expect(gate.waitForArrivals(1))
        queue.close { handed.add($0) }
        #expect(handed.all.isEmpty, "nothing was published when the queue closed")
        queue.pushHookForTesting = nil
        #expect(!queue.pushUnlessClosed(Self.word(1, 0)), "a push after close is refused")
        gate.open()
        producer.join()
        let wasAccepted = accepted.load(ordering: .relaxed)
        #expect(wasAccepted)
        #expect(handed.all == [UInt(bitPattern: Self.word(0, 0))])
        #expect(queue.pop() == nil)
    }

    @Test("a consumer that held the queue at close hands over what it left (J4)")
    func consumerHoldingTheQueueAtCloseDrainsAfter() {
        let queue = InjectionQueue(capacity: 8)
        queue.push(Self.word(0, 0))
        queue.push(Self.word(0, 1))
        let gate = Gate()
        queue.consumeHookForTesting = { gate.pass() }
        let taken = Atomic<UInt>(0)
        let consumer = JoinableThread {
            if let unit = queue.pop() { taken.store(UInt(bitPattern: unit), ordering: .relaxed) }
        }
        #expect(gate.waitForArrivals(1))
        let handed = HandedOver()
        queue.close { handed.add($0) }
        #expect(handed.all.isEmpty, "the consumer holds the queue: close leaves the draining to it")
        gate.open()
        consumer.join()
        let first = taken.load(ordering: .relaxed)
        #expect(first == UInt(bitPattern: Self.word(0, 0)))
        #expect(handed.all == [UInt(bitPattern: Self.word(0, 1))])
    }
}
#endif
