// IdleWorkers: which workers sleep, how many search, and who to wake.
//
// State: one atomic word, low half = workers *searching*, high half = workers *unparked*
// (awake); plus `sleepers`, the parked workers' indices, under a Lock. All state RMWs and
// loads are sequentially consistent.
//
// Protocol (no lost wake-up, and only as many wakes as needed):
//  (W1) A producer publishes work, fences (seq_cst), then `notifyShouldWakeup()`: true only
//       when nobody searches and somebody sleeps. Then, under the lock, it re-checks,
//       counts one more searching and unparked worker, and unparks a sleeper, which starts
//       searching: at most one wake per "nobody is searching" episode.
//  (W2) A worker out of work searches (at most half the awake workers; the rest park at
//       once), spins `spinCount` rounds and, after a stream, goes on for the idle search
//       (SchedulerProtocols.md), then parks: under the lock it leaves both counts and
//       joins `sleepers`. The last searcher then re-checks every queue and, if anything
//       is queued, wakes a worker (possibly itself).
//  (W3) A searcher that finds work stops searching; if it was the last, it wakes another.
// Why nothing is lost: the producer's (push; fence; read state) and the last searcher's
// (decrement; fence; read queues) are Dekker's pattern: the producer sees the decrement
// and wakes someone, or the searcher sees the work. A non-searcher parks only while
// another worker searches, whose own parking runs the check.

import Synchronization

/// The sleeping/searching bookkeeping of one scheduler. Any thread.
final class IdleWorkers: Sendable {
    private static let unparkedOne: UInt64 = 1 << 32
    private static let searchingMask: UInt64 = (1 << 32) - 1

    /// searching | unparked << 32; seq_cst throughout.
    private let state: Atomic<UInt64>

    /// Parked worker indices; also guards the unparked count's pairing.
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

    /// The same test without ordering, for hints.
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

    /// W2: records the worker as parked. True for the last searcher (it re-checks the queues).
    func transitionToParked(worker index: Int, isSearching: Bool) -> Bool {
        sleepers.withLock { sleepers -> Bool in
            let delta = IdleWorkers.unparkedOne | (isSearching ? 1 : 0)
            let old = state.wrappingSubtract(delta, ordering: .sequentiallyConsistent).oldValue
            sleepers.append(index)
            return isSearching && IdleWorkers.searching(old) == 1
        }
    }

    /// After a wake-up: true when still on the sleepers list (woken for shutdown, or
    /// spuriously); false when a waker took it off (it is searching).
    func isParked(worker index: Int) -> Bool {
        sleepers.withLock { $0.contains(index) }
    }

    /// Numbers for tests and diagnostics (a snapshot).
    var snapshot: (searching: Int, unparked: Int, sleeping: Int) {
        let s = state.load(ordering: .sequentiallyConsistent)
        return (IdleWorkers.searching(s), IdleWorkers.unparked(s), sleepers.withLock { $0.count })
    }
}
