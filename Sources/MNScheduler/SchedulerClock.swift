// SchedulerClock — the one clock the runtime's timeouts read: the monotonic clock for a
// real scheduler, the virtual clock of a deterministic one.
//
// Who reads it: ask timeouts (FastMailbox's AskTimer), supervisor restart windows
// (RestartBudget, through `currentTurn`), the actor system's shutdown deadline. Every
// Duration becomes nanoseconds through `Duration.saturatingNanoseconds` (the one helper,
// Duration+Saturating.swift).
//
// Invariants:
//  (K1) a scheduler's clock never changes: `virtual` is fixed at creation.
//  (K2) `currentTurn` is the virtual clock of the deterministic scheduler being driven on
//       the calling thread (set for the whole drive: turns and timer actions), else the
//       monotonic clock; so code inside a turn reads its scheduler's time without being
//       handed the scheduler.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// The pthread key holding the VirtualClock (unretained) of the deterministic scheduler
/// driven on the current thread; nil elsewhere.
private let drivingClockKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key, nil)
    precondition(rc == 0, "MNScheduler: pthread_key_create failed (\(rc))")
    return key
}()

/// Monotonic or virtual nanoseconds (see the file comment). A value type; thread-safe.
package struct SchedulerClock: Sendable {
    /// The deterministic scheduler's clock, nil for the monotonic clock.
    package let virtual: VirtualClock?

    package init(virtual: VirtualClock?) {
        self.virtual = virtual
    }

    /// The monotonic clock (`CLOCK_MONOTONIC`, as `DispatchTime.uptimeNanoseconds`).
    package static var monotonic: SchedulerClock { SchedulerClock(virtual: nil) }

    /// Now, in nanoseconds.
    @inline(__always)
    package func nanoseconds() -> UInt64 {
        if let virtual { return virtual.nanoseconds }
        return monotonicNanoseconds()
    }

    /// The deadline `duration` from now, saturating (see `Duration.saturatingDeadline`).
    package func deadline(after duration: Duration) -> UInt64 {
        duration.saturatingDeadline(from: nanoseconds())
    }

    /// The deadline `nanoseconds` from now on this clock (saturating, as `deadline(after:)`).
    package func deadline(afterNanoseconds nanoseconds: UInt64) -> UInt64 {
        Duration.saturatingDeadline(afterNanoseconds: nanoseconds, from: self.nanoseconds())
    }

    /// The clock of the deterministic scheduler driven on this thread, else monotonic (K2).
    package static var currentTurn: SchedulerClock {
        guard let raw = pthread_getspecific(drivingClockKey) else { return .monotonic }
        return SchedulerClock(virtual: Unmanaged<VirtualClock>.fromOpaque(raw).takeUnretainedValue())
    }

    /// Makes `clock` this thread's `currentTurn` clock; returns the previous value for
    /// `restoreCurrentTurn` (drives of two schedulers may nest).
    package static func setCurrentTurn(_ clock: VirtualClock) -> UnsafeMutableRawPointer? {
        let previous = pthread_getspecific(drivingClockKey)
        pthread_setspecific(drivingClockKey, Unmanaged.passUnretained(clock).toOpaque())
        return previous
    }

    /// Undoes `setCurrentTurn`.
    package static func restoreCurrentTurn(_ previous: UnsafeMutableRawPointer?) {
        pthread_setspecific(drivingClockKey, previous)
    }
}
