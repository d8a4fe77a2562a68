// BlockingMonitor: notices workers stuck inside one turn while work waits, and gets that
// work running on another thread.
//
// One detached thread per scheduler (`mn-monitor`), unless MN_BLOCKING_THRESHOLD_MS is 0.
// Every tick (threshold / 2, at least 1 ms) it reads each worker's turn count (odd while
// a turn runs). The same odd count for `threshold` marks the worker stalled, and its next
// slot becomes stealable. If work waits, a sleeper is woken or a spare started
// (SchedulerCore.spareBudget). A stale reading only delays or repeats a wake-up; work is
// taken by ordinary steals, never by the monitor. Ticks also age OverflowChunkPool and
// sample busy time for SchedulerMetrics. Exits at the next tick after close; holds the
// core, not the Scheduler.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif
import CConcurrencyKit
import Synchronization

enum BlockingMonitor {
    private final class Context {
        let core: SchedulerCore
        init(core: SchedulerCore) { self.core = core }
    }

    /// Starts the monitor thread unless detection is off (threshold 0) or there are no
    /// extra threads to start and nobody to wake (a single worker with a cap of 0).
    static func start(core: SchedulerCore) {
        guard core.configuration.blockingThresholdMilliseconds > 0 else { return }
        let context = Unmanaged.passRetained(Context(core: core))
        var thread = pthread_t()
        core.monitorRunning.store(true, ordering: .releasing)
        let rc = pthread_create(&thread, nil, monitorThreadMain, context.toOpaque())
        if rc == 0 {
            pthread_detach(thread)
        } else {
            core.monitorRunning.store(false, ordering: .releasing)
            context.release()  // no monitor: detection is off
        }
    }

    /// The monitor thread's entry point (takes the context's retain).
    fileprivate static func threadMain(_ raw: UnsafeMutableRawPointer) {
        let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
        _ = ckplat_set_thread_name("mn-monitor")
        run(core: context.core)
        context.core.monitorRunning.store(false, ordering: .releasing)  // shutdown may free the rings now
    }

    /// How often a tick ages OverflowChunkPool.
    static let poolAgingNanoseconds: UInt64 = 100_000_000

    private static func run(core: SchedulerCore) {
        let threshold = UInt64(core.configuration.blockingThresholdMilliseconds) * 1_000_000
        let tick = max(threshold / 2, 1_000_000)
        let count = core.shared.count
        var last = [UInt](repeating: 0, count: count)
        var since = [UInt64](repeating: 0, count: count)
        var lastPoolAging: UInt64 = 0
        while !core.closed.load(ordering: .acquiring) {
            usleep(useconds_t(tick / 1_000))
            let now = monotonicNanoseconds()
            if now &- lastPoolAging >= BlockingMonitor.poolAgingNanoseconds {  // a burst's pooled chunks back to malloc
                lastPoolAging = now
                OverflowChunkPool.trimIfDue(now: now)
            }
            var asleepWithWork = 0, runnableWithWork = 0
            for index in 0..<count {
                let shared = core.shared[index]
                let turns = shared.turnCount.load(ordering: .relaxed)
                // Busy-time sampling for SchedulerMetrics (monitor-only counters).
                shared.samples.store(shared.samples.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
                if turns & 1 == 1 || turns != last[index] {
                    shared.busySamples.store(shared.busySamples.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
                }
                if turns & 1 == 0 || turns != last[index] {
                    last[index] = turns
                    since[index] = now
                    continue
                }
                let running = now &- since[index] + tick  // the turn began at most a tick before the first sighting
                guard running >= threshold else { continue }
                if running > core.longestTurnNanoseconds.load(ordering: .relaxed) {
                    core.longestTurnNanoseconds.store(running, ordering: .relaxed)
                }
                if !shared.stalled.load(ordering: .relaxed) { shared.stalled.store(true, ordering: .releasing) }
                if core.queues[index].count > 0 || shared.nextSlot.load(ordering: .relaxed) != nil
                    || !core.injection.isEmpty || !core.resumed.isEmpty {
                    if shared.threadIsRunnable() { runnableWithWork += 1 } else { asleepWithWork += 1 }
                }
            }
            if asleepWithWork + runnableWithWork > 0 {
                core.helpStalledWorkers(core.spareBudget(asleep: asleepWithWork, runnable: runnableWithWork))
            }
        }
    }
}

/// pthread entry point for BlockingMonitor (a plain function: no captures).
private func monitorThreadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    BlockingMonitor.threadMain(raw!)
    return nil
}
