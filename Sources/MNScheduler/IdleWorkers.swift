// IdleWorkers — which workers sleep, how many search, and who to wake (tokio's idle.rs).
//
// State: one atomic word, low half = workers *searching* for work, high half = workers
// *unparked* (awake); plus `sleepers`, the parked workers' indices, under a Lock.
//
// Protocol (no lost wake-up, and only as many wakes as needed):
//  (W1) Work producer: publish the work (ring push), then a sequentially consistent fence,
//       then `notifyShouldWakeup()`: true only when nobody searches and somebody sleeps.
//       If so, under the lock, re-check, count one more searching + unparked worker and
//       pop a sleeper, and unpark it. The woken worker starts *searching*: so at most one
//       worker is woken per "nobody is searching" episode, and that worker, when it finds
//       work and stops searching as the last searcher, wakes the next one (W3).
//  (W2) A worker out of work becomes a searcher (at most half the awake workers search;
//       the rest park at once). It spins `spinCount` rounds over the queues, then parks:
//       under the lock it leaves the unparked and searching counts and joins `sleepers`.
//       If it was the last searcher it re-checks every queue after that decrement and, if
//       anything is queued, wakes a worker (possibly itself: it is already on `sleepers`).
//  (W3) A searcher that finds work stops searching; if it was the last, it wakes another
//       worker (W1) so the remaining queued work is not left to a sleeping pool.
// Why nothing is lost: the producer's (push; fence; read state) and the last searcher's
// (decrement state; fence; read queues) are the two halves of Dekker's pattern: either
// the producer sees the decremented state and wakes someone, or the searcher sees the
// pushed work. A worker that parks without being a searcher does so while some other
// worker is searching, and that worker's own parking runs the check.
// All state RMWs and loads are sequentially consistent.

import Synchronization

/// The sleeping/searching bookkeeping of one scheduler. Any thread.
final class IdleWorkers: Sendable {
    private static let unparkedOne: UInt64 = 1 << 32
    private static let searchingMask: UInt64 = (1 << 32) - 1

    /// searching | unparked << 32. Written by workers (search/park transitions) and by
    /// wakers (W1: +1 searching, +1 unparked, under `sleepers`' lock); read by producers
    /// after their fence. Sequentially consistent throughout (see the file comment).
    private let state: Atomic<UInt64>

    /// Parked worker indices; also guards the unparked decrement/increment pairing.
    private let sleepers: Lock<[Int]>

    let workerCount: Int

    init(workerCount: Int) {
        self.workerCount = workerCount
        state = Atomic(UInt64(workerCount) << 32)
        sleepers = Lock([])
        sleepers.withLock { $0.reserveCapacity(workerCount) }
    }

    private static func searching(_ s: UInt64) -> Int { Int(s & searchingMask) }
    private static func unparked(_ s: UInt64) -> Int { Int(s >> 32) }

    /// W1: true when a producer should wake a worker. Call after a seq_cst fence.
    @inline(__always)
    func notifyShouldWakeup() -> Bool {
        let s = state.load(ordering: .sequentiallyConsistent)
        return IdleWorkers.searching(s) == 0 && IdleWorkers.unparked(s) < workerCount
    }

    /// The same test without ordering, for hints (see SchedulerCore.notifyParkedFromWorker).
    @inline(__always)
    func notifyShouldWakeupHint() -> Bool {
        let s = state.load(ordering: .relaxed)
        return IdleWorkers.searching(s) == 0 && IdleWorkers.unparked(s) < workerCount
    }

    /// W1: picks a sleeper to wake (already counted as unparked and searching), or nil.
    func workerToNotify() -> Int? {
        guard notifyShouldWakeup() else { return nil }
        return sleepers.withLock { sleepers -> Int? in
            guard notifyShouldWakeup(), let index = sleepers.popLast() else { return nil }
            state.wrappingAdd(IdleWorkers.unparkedOne | 1, ordering: .sequentiallyConsistent)
            return index
        }
    }

    /// W2: becomes a searcher unless half the awake workers already search.
    func transitionToSearching() -> Bool {
        let s = state.load(ordering: .sequentiallyConsistent)
        if 2 * IdleWorkers.searching(s) >= IdleWorkers.unparked(s) { return false }
        state.wrappingAdd(1, ordering: .sequentiallyConsistent)
        return true
    }

    /// W3: stops searching; true when the caller was the last searcher.
    func transitionFromSearching() -> Bool {
        let old = state.wrappingSubtract(1, ordering: .sequentiallyConsistent).oldValue
        return IdleWorkers.searching(old) == 1
    }

    /// W2: records the worker as parked. True when it was the last searcher (it must then
    /// re-check the queues).
    func transitionToParked(worker index: Int, isSearching: Bool) -> Bool {
        sleepers.withLock { sleepers -> Bool in
            let delta = IdleWorkers.unparkedOne | (isSearching ? 1 : 0)
            let old = state.wrappingSubtract(delta, ordering: .sequentiallyConsistent).oldValue
            sleepers.append(index)
            return isSearching && IdleWorkers.searching(old) == 1
        }
    }

    /// After a wake-up: true when the worker is still on the sleepers list (woken for
    /// shutdown or spuriously), false when a waker took it off (it is now searching).
    func isParked(worker index: Int) -> Bool {
        sleepers.withLock { $0.contains(index) }
    }

    /// Numbers for tests and diagnostics (a snapshot).
    var snapshot: (searching: Int, unparked: Int, sleeping: Int) {
        let s = state.load(ordering: .sequentiallyConsistent)
        return (IdleWorkers.searching(s), IdleWorkers.unparked(s), sleepers.withLock { $0.count })
    }
}
