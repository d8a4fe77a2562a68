// AskTimer: the timeouts of one system's pending asks. A dictionary (id → promise) and a
// min-heap of (deadline, id) under one short lock; one Dispatch timer (a VirtualClock's
// on a DeterministicScheduler) fires at the earliest deadline and is re-armed only under
// the lock. An answered ask leaves the dictionary at once; stale heap entries are skipped
// and compacted. Expired asks fail outside the lock. Thread-safe.

import Dispatch
import MNScheduler

final class AskTimer: Sendable {
    /// The timer's handler holds the core strongly; `deinit` breaks the cycle.
    let core: Core

    /// Test hook: each firing's count of expired asks, on the timer's thread.
    var didTimeOut: Lock<(@Sendable (_ count: Int) -> Void)?> { core.didTimeOut }

    init(clock: SchedulerClock = .monotonic) {
        core = Core(clock: clock)
        core.start()
    }

    deinit {
        core.source?.cancel()
    }

    /// `nanoseconds`: saturating.
    func add(_ promise: AskPromiseBase, id: UInt64, nanoseconds: UInt64) { core.add(promise, id: id, nanoseconds: nanoseconds) }

    /// Replied or failed: forget it now.
    func remove(id: UInt64) { core.remove(id: id) }

    /// A snapshot.
    var pendingCount: Int { core.pendingCount }
}

extension AskTimer {
    /// Hashed by a SplitMix64 finaliser: ids are our own sequence.
    struct RequestID: Hashable {
        let raw: UInt64
        init(_ raw: UInt64) { self.raw = raw }

        func hash(into hasher: inout Hasher) { hasher.combine(raw) }

        func _rawHashValue(seed: Int) -> Int {
            var x = raw ^ UInt64(UInt(bitPattern: seed))
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: x ^ (x >> 31))
        }
    }

    final class Core: @unchecked Sendable {
        // @unchecked: `state` is under its lock; the source is scheduled only under it.
        private struct State {
            var pending: [RequestID: AskPromiseBase] = [:]
            var heap: [(deadline: UInt64, id: UInt64)] = []
            /// nil when not armed (`.max` is a real virtual deadline).
            var armedFor: UInt64?
        }

        private let state = FutexLock<State>(State())
            /// nil on a virtual clock.
        let source: (any DispatchSourceTimer)?
        let clock: SchedulerClock
        let didTimeOut = Lock<(@Sendable (_ count: Int) -> Void)?>(nil)

        init(clock: SchedulerClock) {
            self.clock = clock
            source = clock.virtual == nil ? DispatchSource.makeTimerSource(queue: .global()) : nil
        }

        /// Sets the handler (the cycle deinit breaks) and starts the timer.
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

        /// Under the lock.
        private func arm(_ deadline: UInt64) {
            if let source {
                source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(1))
            } else {
                // Weak, so a test's virtual clock does not keep the core alive.
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
