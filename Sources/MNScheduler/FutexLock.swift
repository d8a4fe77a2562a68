// FutexLock: a mutual-exclusion lock on one futex word, for sections that last well under
// a microsecond (the injection queue's producer push, the actor registry, the ask timer).
// Uncontended: one CAS and one exchange. A waiter first looks for a free word for a
// bounded number of pauses, so a short wait costs neither side a system call, then sleeps
// in the kernel. No fairness. Not re-entrant.
//
// Algorithm (Drepper, "Futexes Are Tricky", mutex 3): word 0 free, 1 held, 2 held and
// perhaps waited for.
//   lock:   CAS 0 → 1 (acquire); on failure, up to `spinLimit` times: pause, and if the
//           word reads 0, CAS 0 → 1 (acquire); then loop { exchange(2) (acquire); old 0 →
//           held, return; else ckplat_wait(word, 2) }.
//   unlock: exchange(0) (release); old 2 → ckplat_wake(word, 1).
// Invariants:
//   (F1) Mutual exclusion: every acquisition reads 0 by an atomic RMW of the one word.
//        A spinner's CAS 0 → 1 may pass a sleeper the unlock just woke; the sleeper then
//        stores 2 and sleeps again, and this holder's unlock reads 2 and wakes it.
//   (F2) No lost wake-up: a waiter stores 2 before ckplat_wait(word, 2), which checks the
//        word atomically with sleeping (ckplatform.h). An unlock after that store reads 2
//        and wakes; one before the wait leaves 0, and the wait returns at once. A woken
//        waiter stores 2 again: at worst one wake too many.
//   (F3) Spurious returns only loop.
// Ordering: the acquiring RMW that reads 0 reads from the last unlock's releasing
// exchange, so critical sections are ordered on x86-64 and AArch64. The word is an
// `Atomic` on its own cache line, so ThreadSanitizer sees the edges.

import CConcurrencyKit
import Synchronization

/// A non-recursive mutual-exclusion lock on a futex word (see the file comment), with the
/// state it protects. Thread-safe; `withLock` must not be re-entered on the same thread.
@usableFromInline
package final class FutexLock<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while the lock is held.
    /// The lock word (0 free, 1 held, 2 held and perhaps waited for).
    @usableFromInline let word: UnsafeMutablePointer<Atomic<UInt32>>
    /// The protected state; the lock excludes overlapping accesses (as in `Lock`).
    @exclusivity(unchecked) @usableFromInline var state: State

    /// A free lock guarding `initial`.
    package init(_ initial: State) {
        state = initial
        // A cache line of its own: every lock and unlock writes the word.
        word = UnsafeMutableRawPointer.allocate(byteCount: FutexLock.lineBytes, alignment: FutexLock.lineBytes)
            .bindMemory(to: Atomic<UInt32>.self, capacity: 1)
        word.initialize(to: Atomic<UInt32>(0))
    }

    deinit {
        word.deinitialize(count: 1)
        UnsafeMutableRawPointer(word).deallocate()
    }

    /// Bytes (and alignment) of the word's allocation: one cache line.
    private static var lineBytes: Int { Int(ckshim_cacheline()) }

    /// Runs `body` with exclusive access to the protected state. Inlinable: only contended
    /// cases are calls.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        if !word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            lockContended()
        }
        defer {
            if word.pointee.exchange(0, ordering: .releasing) == 2 { wakeOne() }
        }
        return try body(&state)
    }

    /// Pauses a contended lock spends looking for a free word before it sleeps.
    static var spinLimit: Int { 128 }

    /// The lock's slow path: look a while, then mark the word waited for and sleep until an
    /// exchange reads 0.
    @usableFromInline @inline(never)
    func lockContended() {
        for _ in 0..<FutexLock.spinLimit {
            #if DEBUG
            spinHookForTesting?()
            #endif
            ckshim_stall()
            if word.pointee.load(ordering: .relaxed) == 0,
               word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                return
            }
        }
        while word.pointee.exchange(2, ordering: .acquiring) != 0 {
            _ = ckplat_wait(futexAddress, 2, -1)
        }
    }

    /// The unlock's slow path: a waiter may sleep; wake one.
    @usableFromInline @inline(never)
    func wakeOne() {
        _ = ckplat_wake(futexAddress, 1)
    }

    private var futexAddress: UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
    }

    #if DEBUG
    /// Test hook: called on each look of a contended lock, before its pause. Set before any
    /// thread uses the lock.
    package var spinHookForTesting: (@Sendable () -> Void)?
    #endif

    /// The lock word (test hook: 0 free, 1 held, 2 held and perhaps waited for).
    package var wordForTesting: UInt32 { word.pointee.load(ordering: .relaxed) }
}
