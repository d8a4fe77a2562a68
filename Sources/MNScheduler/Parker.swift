// Parker — puts one worker thread to sleep and wakes it.
//
// Algorithm (the classic three-state futex parker, as in Rust's std and tokio):
//   word: 0 EMPTY, 1 PARKED, 2 NOTIFIED.
//   park():   NOTIFIED → EMPTY and return (a wake-up arrived first); else EMPTY → PARKED,
//             then ckplat_wait(word, PARKED) until the word is NOTIFIED, then → EMPTY.
//   unpark(): exchange(NOTIFIED); if the old value was PARKED, ckplat_wake(word, 1).
// The sleep is the platform layer's wait on an address (ckplatform.h).
// No lost wake-up: an unpark before park leaves NOTIFIED, which park consumes without
// sleeping. An unpark after the EMPTY → PARKED CAS changes the word before it wakes, and
// ckplat_wait checks the word and sleeps atomically with respect to the wake. So the wait
// either sees NOTIFIED and returns, or is asleep when the wake comes.
// Spurious returns (and the portable layer's broadcasts to a shared bucket) loop.
// The word is a Swift `Atomic<UInt32>` in its own allocation so ThreadSanitizer sees the
// release (unpark) / acquire (park) edge, and the wait gets its stable address.

import CConcurrencyKit
import Synchronization

/// A one-thread sleep/wake primitive. `park` only from the owning thread; `unpark` from any.
final class Parker: @unchecked Sendable {
    // @unchecked: the only state is the atomic word behind `word`.

    static let empty: UInt32 = 0
    static let parked: UInt32 = 1
    static let notified: UInt32 = 2

    /// The wait word. Written by the owner (EMPTY ↔ PARKED, NOTIFIED → EMPTY with acquire)
    /// and by wakers (→ NOTIFIED with release), so whatever the waker did before unpark
    /// happens-before the owner's return from park.
    private let word: UnsafeMutablePointer<Atomic<UInt32>>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: Atomic<UInt32>(Parker.empty))
    }

    deinit {
        word.deinitialize(count: 1)
        word.deallocate()
    }

    private var waitAddress: UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
    }

    /// Sleeps until `unpark` (returns at once if one is pending). Owner thread only.
    func park() {
        if word.pointee.compareExchange(expected: Parker.notified, desired: Parker.empty, ordering: .acquiring).exchanged {
            return
        }
        guard word.pointee.compareExchange(expected: Parker.empty, desired: Parker.parked, ordering: .acquiring).exchanged else {
            // Only a waker changes the word from EMPTY, and only to NOTIFIED.
            _ = word.pointee.exchange(Parker.empty, ordering: .acquiring)
            return
        }
        while true {
            _ = ckplat_wait(waitAddress, Parker.parked, -1)
            if word.pointee.compareExchange(expected: Parker.notified, desired: Parker.empty, ordering: .acquiring).exchanged {
                return
            }
        }
    }

    /// Wakes the owner if it sleeps, or makes its next `park` return at once. Any thread.
    func unpark() {
        if word.pointee.exchange(Parker.notified, ordering: .releasing) == Parker.parked {
            _ = ckplat_wake(waitAddress, 1)
        }
    }
}
