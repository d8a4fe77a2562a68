// OverflowChunkPool: maximum-size overflow chunks kept for reuse a short while after
// their queue drained them. A large burst into one mailbox is many such chunks, freed one
// by one; without the pool the next burst would allocate them again, and glibc's heap
// trimming would make every burst pay page faults.
//
// Rules: only maximum-capacity chunks are pooled, one free list per slot size. `take`
// prefers the most recently given. Two generations: `trimIfDue` frees every chunk that
// sat through a whole interval, so a drained burst's memory goes back to malloc within two
// intervals. `give`, `take` and periodic threads (BlockingMonitor's tick, FastMailbox's
// reclaim timer) call `trimIfDue`; after a shutdown two agings still follow. Only a
// draining consumer gives chunks; a deinit or a ring given back frees its own.
// Thread-safety: one FutexLock, taken at most once per `maximumCapacity` messages. Its
// acquire/release orders a chunk's last use by the giver before its reuse.

import Dispatch
import Synchronization

/// Maximum-size overflow chunks kept for reuse (see the file comment). Any thread.
package enum OverflowChunkPool {
    /// How long a given-back chunk may sit unused before `trimIfDue` frees it.
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

    /// A pooled chunk of `slotBytes` slots, header reset; nil when the pool has none.
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

    /// Ages the pool if an interval passed since the last aging: frees the chunks that sat
    /// through a whole interval, moves the rest to the older generation. Any thread.
    package static func trimIfDue(now: UInt64 = monotonicNanoseconds()) {
        lock.withLock { trimIfDue(&$0, now: now) }
    }

    private static func trimIfDue(_ state: inout State, now: UInt64) {
        // Also due when `now` is before the last aging (a test aged the pool ahead of the clock).
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

    /// After a scheduler's shutdown: two agings on Dispatch's global queue, an interval
    /// apart, since its BlockingMonitor no longer ages the pool.
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
