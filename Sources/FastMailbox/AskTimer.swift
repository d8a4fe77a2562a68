// AskTimer: the timeouts of one system's pending asks, on one Dispatch timer.
//
// Every pending ask is an entry in a dictionary (request id → promise) and in a min-heap
// of (deadline, request id), under one short lock. A single DispatchSource fires at the
// earliest deadline. An answered ask leaves the dictionary at once, so its promise is
// freed now; its heap entry is skipped when it comes up, and the heap is rebuilt when
// stale entries outnumber live ones. The handler fails expired asks outside the lock.
// The timer is re-armed only under the lock, so it is never set later than the heap's
// minimum. Every method may be called from any thread.
//
// Clock: the scheduler's (SchedulerClock). On a DeterministicScheduler, arming adds a
// timer to its VirtualClock instead, which fires when the test advances virtual time.
// Deadlines saturate at `UInt64.max`, which a virtual clock can reach (VirtualClock, V4);
// such a deadline is armed like any other, so an ask with a timer always ends.

import Dispatch
import MNScheduler

final class AskTimer: Sendable {
    /// Everything but the teardown. The Dispatch timer's handler holds the core strongly,
    /// a cycle that `deinit` breaks by cancelling the source. No weak reference: it would
    /// give the object a side table and slow every retain and release of it.
    let core: Core

    /// Test hook: called on the timer's thread with the number of expired asks of one
    /// firing, once they have been failed. Set it before the asks it observes.
    var didTimeOut: Lock<(@Sendable (_ count: Int) -> Void)?> { core.didTimeOut }

    init(clock: SchedulerClock = .monotonic) {
        core = Core(clock: clock)
        core.start()
    }

    deinit {
        core.source?.cancel()
    }

    /// Starts timing `promise` out `nanoseconds` from now (on `clock`).
    /// `nanoseconds`: the timeout as `Duration.saturatingNanoseconds` gives it.
    func add(_ promise: AskPromiseBase, id: UInt64, nanoseconds: UInt64) { core.add(promise, id: id, nanoseconds: nanoseconds) }

    /// The ask ended (replied or failed): forget it now.
    func remove(id: UInt64) { core.remove(id: id) }

    /// Asks waiting for a reply or a timeout (a snapshot).
    var pendingCount: Int { core.pendingCount }
}

extension AskTimer {
    /// A request id as the pending table's key, hashed by a SplitMix64 finaliser instead of
    /// SipHash: ids are the system's own sequence numbers, so hash flooding is no concern.
    struct RequestID: Hashable {
        let raw: UInt64
        init(_ raw: UInt64) { self.raw = raw }

        func hash(into hasher: inout Hasher) { hasher.combine(raw) }

        /// What `Dictionary` calls for a bucket: the finaliser mixes every bit of the id into
        /// the low bits it masks.
        func _rawHashValue(seed: Int) -> Int {
            var x = raw ^ UInt64(UInt(bitPattern: seed))
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: x ^ (x >> 31))
        }
    }

    final class Core: @unchecked Sendable {
        // @unchecked: `state` is under its lock; the DispatchSource is thread-safe, and we
        // schedule it only under the lock.
        private struct State {
            var pending: [RequestID: AskPromiseBase] = [:]
            var heap: [(deadline: UInt64, id: UInt64)] = []
            /// The deadline the timer is set for; nil when not armed. Not a `.max` sentinel:
            /// `.max` is a real deadline on a virtual clock (VirtualClock, V4).
            var armedFor: UInt64?
        }

        private let state = FutexLock<State>(State())
        /// The Dispatch timer; nil on a virtual clock.
        let source: (any DispatchSourceTimer)?
        /// Where deadlines are read.
        let clock: SchedulerClock
        let didTimeOut = Lock<(@Sendable (_ count: Int) -> Void)?>(nil)

        init(clock: SchedulerClock) {
            self.clock = clock
            source = clock.virtual == nil ? DispatchSource.makeTimerSource(queue: .global()) : nil
        }

        /// Sets the Dispatch timer's handler (the cycle AskTimer's deinit breaks) and starts it.
        func start() {
            guard let source else { return }
            source.setEventHandler { [self] in fire() }
            source.activate()
        }

        func add(_ promise: AskPromiseBase, id: UInt64, nanoseconds: UInt64) {
            let deadline = clock.deadline(afterNanoseconds: nanoseconds)
            state.withLock { state in
                state.pending[RequestID(id)] = promise
                state.heap.append((deadline, id))
                siftUp(&state.heap, state.heap.count - 1)
                if let armed = state.armedFor, armed <= deadline { return }
                state.armedFor = deadline
                arm(deadline)
            }
        }

        /// Sets the timer for `deadline` (called under the lock).
        private func arm(_ deadline: UInt64) {
            if let source {
                source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(1))
            } else {
                // A weak reference, so a test's virtual clock does not keep the core alive.
                clock.virtual?.addTimer(at: deadline) { [weak self] in self?.fire() }
            }
        }

        func remove(id: UInt64) {
            state.withLock { state in
                guard state.pending.removeValue(forKey: RequestID(id)) != nil else { return }
                if state.heap.count > 1_024, state.heap.count > 2 * state.pending.count { rebuild(&state) }
            }
        }

        var pendingCount: Int { state.withLock { $0.pending.count } }

        private func fire() {
            let now = clock.nanoseconds()
            let expired: [AskPromiseBase] = state.withLock { state in
                var expired: [AskPromiseBase] = []
                while let top = state.heap.first, top.deadline <= now {
                    popMin(&state.heap)
                    if let promise = state.pending.removeValue(forKey: RequestID(top.id)) { expired.append(promise) }
                }
                state.armedFor = state.heap.first?.deadline
                if let next = state.armedFor { arm(next) }
                return expired
            }
            for promise in expired { promise.timeOut() }
            if !expired.isEmpty, let hook = didTimeOut.withLock({ $0 }) { hook(expired.count) }
        }

        private func rebuild(_ state: inout State) {
            var live = state.heap.filter { state.pending[RequestID($0.id)] != nil }
            live.sort { $0.deadline < $1.deadline }  // a sorted array is a valid min-heap
            state.heap = live
        }

        private func siftUp(_ heap: inout [(deadline: UInt64, id: UInt64)], _ start: Int) {
            var child = start
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].deadline < heap[parent].deadline else { return }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        private func popMin(_ heap: inout [(deadline: UInt64, id: UInt64)]) {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
                if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
                if smallest == parent { return }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }
}
