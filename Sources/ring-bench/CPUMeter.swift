import Foundation
import Synchronization

/// "CPUs busy": CPU time (user + system, getrusage) divided by wall time — how many cores
/// a cell kept busy. Beside a worker sweep it tells a runtime that did more work with a
/// second core from one that burnt it (spinning, waking, bouncing cache lines), and a
/// shared machine that never gave it the second core (busy stays near 1).
///
/// Over the timed part when it can: `measure` arms the meter, the cell's first
/// `Clock.now()` (its t0) samples the CPU time, and `RunOutcome.timed(since: t0)` closes
/// the window. A cell whose first clock reading is not its t0, and a child process (the Go
/// peer, a pinned cell, measured with RUSAGE_CHILDREN), get the whole call instead
/// (set-up and shutdown included, which lowers the figure for very short runs).
enum CPUMeter {
    /// The extra's key in RunOutcome.extras (and results.json / results.csv).
    static let key = "cpu_busy"

    /// Set by `measure`; the next `Clock.now()` clears it and records `start`.
    private static let armed = Atomic<Bool>(false)
    /// The timed part's start: its clock reading and the process's CPU seconds then.
    private static let start = Mutex<(wall: UInt64, cpu: Double)?>(nil)

    /// CPU seconds (user + system) used so far by this process (`RUSAGE_SELF`) or by its
    /// waited-for children (`RUSAGE_CHILDREN`).
    static func cpuSeconds(children: Bool = false) -> Double {
        var usage = rusage()
        getrusage((children ? RUSAGE_CHILDREN : RUSAGE_SELF).rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Called by Clock.now() with its reading: the first one after `measure` armed the meter
    /// starts the window (one relaxed load otherwise).
    @inline(__always)
    static func clockRead(_ wall: UInt64) {
        guard armed.load(ordering: .relaxed), armed.exchange(false, ordering: .relaxed) else { return }
        let cpu = cpuSeconds()
        start.withLock { $0 = (wall, cpu) }
    }

    /// CPUs busy from the timed part's start at `wall` until now, or nil when the window
    /// did not start at `wall`.
    static func busy(since wall: UInt64, seconds: Double) -> Double? {
        guard seconds > 0, let started = start.withLock({ $0 }), started.wall == wall else { return nil }
        return (cpuSeconds() - started.cpu) / seconds
    }

    /// Runs `body` and adds CPUs busy to its outcome: the timed part's when `body` ran one
    /// in this process (see the type's comment), else the whole call's.
    static func measure(children: Bool = false, _ body: () -> RunOutcome) -> RunOutcome {
        start.withLock { $0 = nil }
        let cpu0 = cpuSeconds(children: children), wall0 = Clock.now()
        if !children { armed.store(true, ordering: .relaxed) }
        var outcome = body()
        armed.store(false, ordering: .relaxed)
        let wall = Double(Clock.now() - wall0) / 1e9
        if outcome.failure == nil, outcome.extras[key] == nil, wall > 0 {
            outcome.extras[key] = (cpuSeconds(children: children) - cpu0) / wall
        }
        return outcome
    }
}
