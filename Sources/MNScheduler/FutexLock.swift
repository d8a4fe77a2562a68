// FutexLock: a mutual-exclusion lock on one futex word, for the two locks every spawned
// actor takes twice in its life: the injection queue's producer lock and the actor
// system's registry. Uncontended it costs one CAS and one exchange, with none of a pthread
// mutex's type dispatch and owner bookkeeping. Waiters sleep in the kernel, as on
// pthread's default mutex (no spinning, no fairness).
//
// Algorithm (Drepper, "Futexes Are Tricky", mutex 3): word 0 free, 1 held, 2 held and
// perhaps waited for.
//   lock:   CAS 0 → 1 (acquire); on failure, loop { exchange(2) (acquire); old 0 → held,
//           return; else ckplat_wait(word, 2) }.
//   unlock: exchange(0) (release); old 2 → ckplat_wake(word, 1).
// Invariants:
//   (F1) mutual exclusion: the holder is the thread whose CAS or exchange read 0, and the
//        word is nonzero until its unlock's exchange; every acquisition reads 0 by an
//        atomic read-modify-write of the one word, so two cannot both read the same 0.
//   (F2) no lost wake-up: a thread sleeps only in ckplat_wait(word, 2), which checks the
//        word atomically with going to sleep, as far as ckplat_wake can tell (the kernel's
//        futex on Linux; ckplatform.h states the contract). A waiter stores 2 before
//        it sleeps, so an unlock after that store reads 2 and wakes one sleeper; an unlock
//        between the store and the wait leaves 0, the wait returns at once (EAGAIN) and the
//        waiter's next exchange takes the lock. A woken waiter stores 2 again, not 1 (others
//        may still sleep): at worst one wake too many, never one too few.
//   (F3) spurious returns (EINTR, a wake meant for an earlier state) only loop.
// Memory ordering: the acquiring CAS or exchange that reads 0 reads from the previous
// unlock's releasing exchange, so each critical section happens before the next, on x86-64
// (locked instructions) and AArch64 (acquire and release forms) alike. The wait and wake
// calls need no ordering of their own.
// The word is a Swift `Atomic` in its own cache-line allocation (a stable address for the
// kernel), so ThreadSanitizer sees the lock's happens-before edges.
// Not re-entrant: a holder that locks again deadlocks (as pthread's default mutex does).

import CConcurrencyKit
import Synchronization

/// A non-recursive mutual-exclusion lock on a futex word (see the file comment), with the
/// state it protects. Thread-safe; `withLock` must not be re-entered on the same thread.
@usableFromInline
package final class FutexLock<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while the lock is held.
    /// The lock word (0 free, 1 held, 2 held and perhaps waited for).
    @usableFromInline let word: UnsafeMutablePointer<Atomic<UInt32>>
    /// The protected state. The lock excludes overlapping accesses, so the runtime's
    /// dynamic exclusivity check would prove nothing more (as in `Lock`).
    @exclusivity(unchecked) @usableFromInline var state: State

    /// A free lock guarding `initial`.
    package init(_ initial: State) {
        state = initial
        // A cache line of its own: a 4-byte malloc would share its line with whatever was
        // allocated next to it, and every lock and unlock writes the word.
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

    /// Runs `body` with exclusive access to the protected state. Inlinable, so callers in
    /// other modules get it specialised; only the contended cases are calls.
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

    /// The lock's slow path: mark the word waited for, and sleep until an exchange reads 0.
    @usableFromInline @inline(never)
    func lockContended() {
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

    /// The lock word (test hook: 0 free, 1 held, 2 held and perhaps waited for).
    package var wordForTesting: UInt32 { word.pointee.load(ordering: .relaxed) }
}
