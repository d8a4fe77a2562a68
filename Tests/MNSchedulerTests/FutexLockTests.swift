import Testing
import Synchronization
@testable import MNScheduler
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct FutexLockTests {
    @Test("mutual exclusion: four threads' unsynchronised increments under the lock all count")
    func exclusion() {
        let lock = FutexLock<Int>(0)
        incrementConcurrently(lock, threads: 4, perThread: 20_000)
        #expect(lock.withLock { $0 } == 4 * 20_000)
        #expect(lock.wordForTesting == 0)
    }

    @Test("a thread that finds the lock held sleeps (word 2) and is woken by the unlock; the state it then reads is the holder's")
    func waiterIsWoken() {
        let lock = FutexLock<[Int]>([])
        let holding = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
        let holder = JoinableThread {
            lock.withLock { state in
                holding.store(true, ordering: .sequentiallyConsistent)
                // Hold until the waiter has marked the word waited for (it is asleep, or about to be).
                while !release.load(ordering: .sequentiallyConsistent) { sched_yield() }
                state.append(1)
            }
        }
        #expect(waitUntil { holding.load(ordering: .sequentiallyConsistent) })
        let waiterDone = Atomic<Bool>(false)
        let waiter = JoinableThread {
            lock.withLock { $0.append(2) }
            waiterDone.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(waitUntil { lock.wordForTesting == 2 })  // the waiter took the slow path
        let waiterFinishedEarly = waiterDone.load(ordering: .sequentiallyConsistent)
        #expect(!waiterFinishedEarly)
        release.store(true, ordering: .sequentiallyConsistent)
        holder.join()
        waiter.join()
        #expect(lock.withLock { $0 } == [1, 2])
        #expect(lock.wordForTesting == 0)
    }

#if DEBUG  // the spin hook is compiled out of release builds
    @Test("a waiter that finds the lock freed while it looks takes it at its next look, without sleeping")
    func spinnerTakesFreedLock() {
        let lock = FutexLock<[Int]>([])
        let looks = Atomic<Int>(0)
        let released = Atomic<Bool>(false)
        // The waiter's first look blocks here until the holder has unlocked.
        lock.spinHookForTesting = {
            looks.wrappingAdd(1, ordering: .sequentiallyConsistent)
            while !released.load(ordering: .sequentiallyConsistent) { sched_yield() }
        }
        let holding = Atomic<Bool>(false)
        let holder = JoinableThread {
            lock.withLock { state in
                holding.store(true, ordering: .sequentiallyConsistent)
                _ = waitUntil { looks.load(ordering: .sequentiallyConsistent) > 0 }  // bounded: a waiter that never looks fails below
                state.append(1)
            }
            released.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(waitUntil { holding.load(ordering: .sequentiallyConsistent) })
        let waiter = JoinableThread { lock.withLock { $0.append(2) } }
        holder.join()
        waiter.join()
        #expect(lock.withLock { $0 } == [1, 2])
        let looked = looks.load(ordering: .sequentiallyConsistent)
        #expect(looked == 1, "the waiter looked \(looked) times: it did not take the freed lock at once")
        #expect(lock.wordForTesting == 0)
    }
#endif

    @Test("a body that throws gives the lock back")
    func throwingBodyUnlocks() {
        struct Failure: Error {}
        let lock = FutexLock<Int>(0)
        #expect(throws: Failure.self) { try lock.withLock { _ in throw Failure() } }
        #expect(lock.wordForTesting == 0)
        #expect(lock.withLock { $0 += 1; return $0 } == 1)
    }

    @Test("stress: eight threads on two cores, short critical sections, sleeping waiters: no hang, exact count")
    func contendedSleepers() {
        let lock = FutexLock<Int>(0)
        // A holder descheduled now and then: waiters sleep.
        incrementConcurrently(lock, threads: 8, perThread: 5_000, yieldEvery: 512)
        #expect(lock.withLock { $0 } == 8 * 5_000)
        #expect(lock.wordForTesting == 0)
    }
}

/// `threads` threads each add 1 to the lock's state `perThread` times, a plain
/// read-modify-write that only the lock makes exact; with `yieldEvery`, a holder yields the
/// CPU inside the critical section every that many increments (staggered per thread).
private func incrementConcurrently(_ lock: FutexLock<Int>, threads: Int, perThread: Int, yieldEvery: Int? = nil) {
    let started = (0..<threads).map { index in
        JoinableThread {
            for k in 0..<perThread {
                lock.withLock { value in
                    value += 1
                    if let yieldEvery, (k + index) % yieldEvery == 0 { sched_yield() }
                }
            }
        }
    }
    for thread in started { thread.join() }
}
