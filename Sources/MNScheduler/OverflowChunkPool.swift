// OverflowChunkPool — maximum-size overflow chunks (OverflowChunk.maximumCapacity slots)
// kept for reuse for a short while after their queue drained them, instead of going back
// to malloc at once.
//
// Why: a large burst into one mailbox is many maximum-size chunks, freed one by one as the
// consumer drains them; the next burst allocates them again. glibc trims its heap's top
// back to the kernel once enough of it is free, so every burst would pay page faults. Go's allocator and Pony's pools keep freed memory for reuse too.
//
// Rules: only chunks of the maximum capacity are pooled (the small first links of a chain
// are ordinary allocations), one free list per slot size (8, 16, …, 64 bytes: the chunk's
// header records its slot size). `take` prefers the most recently given chunks. The pool
// ages in two generations: `trimIfDue` frees every chunk that sat in it for a whole
// interval (`intervalNanoseconds`), so a drained burst's memory goes back to malloc one to
// two intervals after its last chunk was given back. Every `give` and `take` calls
// `trimIfDue`, and so do periodic threads (BlockingMonitor's tick, FastMailbox's reclaim
// timer). Only a draining consumer gives chunks (MPSCQueue.releasePendingChunk); a deinit
// and a ring given back free theirs to malloc. After a shutdown two agings still follow
// (`ageAfterShutdown`).
// Thread-safety: one FutexLock around all of it. A chunk is taken or given once per
// `maximumCapacity` messages at most, so the lock is never on a per-message path; the
// lock's acquire/release orders a chunk's last use by the giver before its reuse by the
// taker (x86-64 and AArch64 alike: FutexLock's CAS acquires, its exchange releases).

import Dispatch
import Synchronization

/// Maximum-size overflow chunks kept for reuse (see the file comment). Any thread.
package enum OverflowChunkPool {
    /// How long a given-back chunk may sit unused before `trimIfDue` frees it (between one
    /// and two intervals).
    package static let intervalNanoseconds: UInt64 = 1_000_000_000

    /// Free lists per slot size: index slotBytes / 8 − 1.
    struct State {
        /// Chunks given back since the last aging, per size class (linked through `next`).
        var fresh = [UnsafeMutableRawPointer?](repeating: nil, count: 8)
        /// Chunks that were already in the pool at the last aging: freed at the next one.
        var aged = [UnsafeMutableRawPointer?](repeating: nil, count: 8)
        /// When the generations were last aged.
        var agedAt: UInt64 = 0
    }

    private static let lock = FutexLock(State())

    /// A pooled chunk of `slotBytes` slots, header reset (no next, count 0); nil when the
    /// pool has none.
    static func take(slotBytes: Int, now: UInt64 = monotonicNanoseconds()) -> UnsafeMutableRawPointer? {
        let index = slotBytes / 8 - 1
        return lock.withLock { state -> UnsafeMutableRawPointer? in
            trimIfDue(&state, now: now)
            let chunk: UnsafeMutableRawPointer
            if let fresh = state.fresh[index] {
                chunk = fresh
                state.fresh[index] = OverflowChunk(fresh).next
            } else if let aged = state.aged[index] {
                chunk = aged
                state.aged[index] = OverflowChunk(aged).next
            } else {
                return nil
            }
            OverflowChunk(chunk).next = nil
            OverflowChunk(chunk).count = 0
            return chunk
        }
    }

    /// Keeps `chunk` (maximum capacity, its items moved out) for reuse.
    static func give(_ chunk: UnsafeMutableRawPointer, slotBytes: Int, now: UInt64 = monotonicNanoseconds()) {
        let index = slotBytes / 8 - 1
        lock.withLock { state in
            trimIfDue(&state, now: now)
            OverflowChunk(chunk).next = state.fresh[index]
            state.fresh[index] = chunk
        }
    }

    /// Ages the pool if an interval has passed since the last aging: frees the chunks that
    /// sat through a whole interval, and moves the rest into the older generation. Any
    /// thread; for periodic callers (see the file comment).
    package static func trimIfDue(now: UInt64 = monotonicNanoseconds()) {
        lock.withLock { trimIfDue(&$0, now: now) }
    }

    private static func trimIfDue(_ state: inout State, now: UInt64) {
        // Due an interval after the last aging; also when `now` is before it (a test aged
        // the pool at a time ahead of the clock: the monotonic clock never goes back).
        guard now < state.agedAt || now - state.agedAt >= intervalNanoseconds else { return }
        state.agedAt = now
        for index in 0..<8 {
            var next = state.aged[index]
            while let chunk = next {
                next = OverflowChunk(chunk).next
                chunk.deallocate()
            }
            state.aged[index] = state.fresh[index]
            state.fresh[index] = nil
        }
    }

    /// After a scheduler's shutdown (Scheduler.shutdown): its BlockingMonitor no longer
    /// ages the pool, so two agings follow on Dispatch's global queue, an interval apart.
    /// The pool itself stays usable.
    package static func ageAfterShutdown() {
        let interval = Int(intervalNanoseconds)
        for step in 1...2 {
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(step * interval + interval / 10)) {
                trimIfDue()
            }
        }
    }

    /// Whether `chunk` is in the pool now (tests).
    package static func contains(_ chunk: UnsafeMutableRawPointer) -> Bool {
        lock.withLock { state in
            for list in state.fresh + state.aged {
                var next = list
                while let current = next {
                    if current == chunk { return true }
                    next = OverflowChunk(current).next
                }
            }
            return false
        }
    }

    /// When the pool was last aged (tests: to age it an exact interval later).
    package static var agedAt: UInt64 { lock.withLock { $0.agedAt } }
}
