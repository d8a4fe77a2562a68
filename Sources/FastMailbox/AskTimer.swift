// AskTimer — the timeouts of one system's pending asks, on one Dispatch timer.
//
// A timer per ask (a DispatchSource) cost about four allocations per ask and a kernel
// timer each; here every pending ask is an entry in a dictionary (request id → promise,
// the id hashed cheaply: RequestID)
// and a min-heap of (deadline, request id), under one short lock (a FutexLock: each ask
// takes it twice), and a single DispatchSource fires at the earliest deadline. An answered
// ask removes its dictionary entry at once (so the promise is freed now, not at its
// deadline); its heap entry (16 bytes) is skipped when it comes up, and the heap is
// rebuilt from the dictionary when stale entries outnumber live ones, so memory follows
// the asks still pending. The timer's handler fails the expired asks outside the lock
// (AskPromiseBase.fail resumes a continuation). The Dispatch timer is re-armed only under
// the lock, so the deadline it is set for is always the heap's minimum (or later than a
// removed entry's: a wasted fire). Thread-safety: every method from any thread.
// Clock: the system's scheduler's (SchedulerClock). On a DeterministicScheduler there is
// no Dispatch timer: arming adds a timer to its VirtualClock, which fires when the test
// advances virtual time past the deadline (a stale one finds nothing expired). Deadlines
// saturate at `UInt64.max`, which a virtual clock can reach (VirtualClock, V4): such a
// deadline is armed and fires like any other, so an ask with a timer always ends.

import Dispatch
import MNScheduler

final class AskTimer: Sendable {
    /// Everything but the teardown. The Dispatch timer's handler holds the core strongly
    /// (core → source → handler → core), a cycle that `deinit` below breaks by cancelling
    /// the source: Dispatch then releases the handler. No weak reference to either object
    /// exists on a real clock: a weak reference gives its object a side table, and then every
    /// retain and release of it takes the runtime's slow path — each ask retains the timer
    /// twice (add, and remove when it is answered).
    let core: Core

    /// Test hook: called on the timer's thread once the expired asks of one firing have been
    /// failed (their continuations resumed, so their tasks are queued on their executors),
    /// with their number. Set it before the asks it observes.
    var didTimeOut: Lock<(@Sendable (_ count: Int) -> Void)?> { core.didTimeOut }

    init(clock: SchedulerClock = .monotonic) {
        core = Core(clock: clock)
        core.start()
    }

    deinit {
        core.source?.cancel()
    }

    /// Starts timing `promise` out `nanoseconds` from now (on `clock`).
    /// `nanoseconds`: the timeout, as `Duration.saturatingNanoseconds` gives it (the
    /// caller has it already: one conversion per ask).
    func add(_ promise: AskPromiseBase, id: UInt64, nanoseconds: UInt64) { core.add(promise, id: id, nanoseconds: nanoseconds) }

    /// The ask ended (replied or failed): forget it now.
    func remove(id: UInt64) { core.remove(id: id) }

    /// Asks waiting for a reply or a timeout (a snapshot).
    var pendingCount: Int { core.pendingCount }
}

extension AskTimer {
    /// A request id as the pending table's key, hashed by a SplitMix64 finaliser of the id
    /// and the table's seed instead of the standard library's SipHash: ids are the system's
    /// own sequence numbers, never chosen by an outsider, so hash flooding is not a concern,
    /// and SipHash cost two hashes of ~90 instructions per ask (one to add, one to remove).
    struct RequestID: Hashable {
        let raw: UInt64
        init(_ raw: UInt64) { self.raw = raw }

        func hash(into hasher: inout Hasher) { hasher.combine(raw) }

        /// What `Dictionary` calls for a bucket: the finaliser mixes every bit of the id into
        /// the low bits it masks. (A standard library hook, public and underscored.)
        func _rawHashValue(seed: Int) -> Int {
            var x = raw ^ UInt64(UInt(bitPattern: seed))
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: x ^ (x >> 31))
        }
    }

    final class Core: @unchecked Sendable {
        // @unchecked: `state` is under its lock; `source` is a DispatchSource, whose schedule
        // and cancel are thread-safe (we call schedule only under the lock, so the armed
        // deadline and the heap's minimum never disagree).
        private struct State {
            var pending: [RequestID: AskPromiseBase] = [:]
            var heap: [(deadline: UInt64, id: UInt64)] = []
            /// The deadline the timer is set for; nil when it is not armed. (Not a `.max`
            /// sentinel: `.max` is a real deadline on a virtual clock — every deadline
            /// saturates to it once the clock has reached it, see VirtualClock's V4 — and
            /// must be armed like any other.)
            var armedFor: UInt64?
        }

        private let state = FutexLock<State>(State())
        /// The Dispatch timer; nil on a virtual clock.
        let source: (any DispatchSourceTimer)?
        /// Where deadlines are read (the system scheduler's clock).
        let clock: SchedulerClock
        /// AskTimer.didTimeOut.
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

        /// Starts timing `promise` out `nanoseconds` from now (on `clock`).
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
                // A virtual clock keeps its timers until they fire: a weak reference, so a test's
                // clock does not keep the core alive (only deterministic systems make one).
                clock.virtual?.addTimer(at: deadline) { [weak self] in self?.fire() }
            }
        }

        /// The ask ended (replied or failed): forget it now.
        func remove(id: UInt64) {
            state.withLock { state in
                guard state.pending.removeValue(forKey: RequestID(id)) != nil else { return }
                if state.heap.count > 1_024, state.heap.count > 2 * state.pending.count { rebuild(&state) }
            }
        }

        /// Asks waiting for a reply or a timeout (a snapshot).
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
