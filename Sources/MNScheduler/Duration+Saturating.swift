// Duration+Saturating — the one place a `Duration` becomes nanoseconds or a deadline.
//
// Every timeout in FastMailbox and MNScheduler (ask, Inbox.receive, shutdown, supervisor
// windows, blocking thresholds) goes through these two functions, so a huge duration
// (`.seconds(Int64.max)`, `.seconds(1e11)`) means "practically forever" instead of trapping
// on overflow or wrapping round to "already expired"; a negative one means zero.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

extension Duration {
    /// The duration in nanoseconds, clamped to `0...UInt64.max` (negative → 0, too large →
    /// `UInt64.max`). Never traps.
    package var saturatingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        // components keeps both parts the same sign; attoseconds < 10^18.
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, overflow2) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflow2 ? .max : sum
    }

    /// The monotonic deadline (`CLOCK_MONOTONIC` nanoseconds, as `DispatchTime.uptimeNanoseconds`
    /// on Linux) this duration after `now`, clamped to `UInt64.max` ("never").
    package func saturatingDeadline(from now: UInt64 = monotonicNanoseconds()) -> UInt64 {
        Duration.saturatingDeadline(afterNanoseconds: saturatingNanoseconds, from: now)
    }

    /// `now + nanoseconds`, clamped to `UInt64.max` ("never"): the deadline for a caller
    /// that already has the duration in nanoseconds (from `saturatingNanoseconds`).
    /// ("Never" on the monotonic clock only: a deterministic scheduler's virtual clock can
    /// reach `UInt64.max`, and its timers due then fire — VirtualClock, V4.)
    package static func saturatingDeadline(afterNanoseconds nanoseconds: UInt64, from now: UInt64) -> UInt64 {
        let (sum, overflow) = now.addingReportingOverflow(nanoseconds)
        return overflow ? .max : sum
    }
}

/// Nanoseconds of the monotonic clock (the clock DispatchTime uses on Linux).
package func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
