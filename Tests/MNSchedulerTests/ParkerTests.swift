import Testing
import Synchronization
@testable import MNScheduler
import TestSupport

@Suite struct ParkerTests {
    @Test("an unpark before park makes park return at once; an unpark during park wakes it")
    func unparkBeforeAndDuring() {
        let parker = Parker()
        parker.unpark()
        parker.park()  // returns: the wake-up was pending
        let woke = Atomic<Bool>(false)
        let sleeper = JoinableThread {
            parker.park()
            woke.store(true, ordering: .sequentiallyConsistent)
        }
        parker.unpark()  // before or during the sleeper's park: either way it must wake
        #expect(waitUntil { woke.load(ordering: .sequentiallyConsistent) })
        sleeper.join()
    }

    @Test("stress: 2000 park/unpark hand-offs between two threads never hang")
    func pingPong() {
        let a = Parker(), b = Parker()
        let rounds = 2000
        let done = Atomic<Int>(0)
        let other = JoinableThread {
            for _ in 0..<rounds { b.park(); a.unpark() }
            done.wrappingAdd(1, ordering: .sequentiallyConsistent)
        }
        for _ in 0..<rounds { b.unpark(); a.park() }
        other.join()
        #expect(done.load(ordering: .sequentiallyConsistent) == 1)
    }
}
