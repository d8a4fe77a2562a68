// The scheduler table (MNScheduler issue):
//  1. Units per second through the scheduler with 1 and 2 workers, and the ratio:
//     - "yield": 1000 units, each turn returns .more until it has run `ops/1000` turns
//       (local queue push/pop, stealing);
//     - "ping-pong": 100 pairs of units, each turn schedules its partner from the worker
//       (the next-slot path), `ops` turns in all.
//  2. Idle CPU: the process's CPU time (getrusage) over 2 idle seconds with a started
//     scheduler whose workers have nothing to do.
//  3. A native Swift actor on MNSerialExecutor against the same actor on Swift's default
//     executor, in the same run: ns per awaited call, with the caller on MNTaskExecutor
//     (the fast path) or on Swift's default pool, and the ratio to the default actor.
import Foundation
import Synchronization
import FastMailbox
import MNScheduler

enum SchedulerBenchmarks {
    // MARK: units per second

    /// A unit that runs `turnsLeft` turns, returning .more until the last.
    final class YieldUnit: ScheduledUnit, @unchecked Sendable {
        var turnsLeft: Int
        let done: DoneCounter
        init(turns: Int, done: DoneCounter) {
            turnsLeft = turns
            self.done = done
        }
        override func runTurn(budget: Int) -> TurnOutcome {
            turnsLeft -= 1
            if turnsLeft > 0 { return .more }
            done.finishOne()
            return .idle
        }
    }

    /// A unit that, on each turn, schedules its partner until the pair has run `turns` turns.
    final class PingPongUnit: ScheduledUnit, @unchecked Sendable {
        unowned(unsafe) var partner: PingPongUnit!
        let scheduler: Scheduler
        let shared: Atomic<Int>  // turns left for the pair; only one of the two runs at a time
        let done: DoneCounter
        init(scheduler: Scheduler, turns: Int, done: DoneCounter) {
            self.scheduler = scheduler
            self.shared = Atomic(turns)
            self.done = done
        }
        override func runTurn(budget: Int) -> TurnOutcome {
            let left = partner.shared.wrappingSubtract(1, ordering: .relaxed).newValue
            if left > 0 {
                try? scheduler.schedule(partner)
            } else {
                done.finishOne()
            }
            return .idle
        }
    }

    /// Counts finished units; the last one signals the waiting thread.
    final class DoneCounter: Sendable {
        let remaining: Atomic<Int>
        let semaphore = DispatchSemaphore(value: 0)
        init(_ n: Int) { remaining = Atomic(n) }
        func finishOne() {
            if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { semaphore.signal() }
        }
    }

    static func scheduler(workers: Int) -> Scheduler {
        do {
            return try Scheduler(configuration: SchedulerConfiguration(workers: workers))
        } catch {
            RingBench.fail("\(error)")
        }
    }

    /// Turns per second for the yield workload.
    static func yieldRate(workers: Int, ops: Int) -> Double {
        let s = scheduler(workers: workers)
        defer { s.shutdown() }
        let unitCount = 1000
        let turns = max(ops / unitCount, 1)
        let done = DoneCounter(unitCount)
        let units = (0..<unitCount).map { _ in YieldUnit(turns: turns, done: done) }
        let t0 = Measure.now()
        for unit in units { try? s.schedule(unit) }
        done.semaphore.wait()
        let elapsed = Double(Measure.now() - t0) / 1e9
        return Double(unitCount * turns) / elapsed
    }

    /// Turns per second for the ping-pong workload.
    static func pingPongRate(workers: Int, ops: Int) -> Double {
        let s = scheduler(workers: workers)
        defer { s.shutdown() }
        let pairs = 100
        let turns = max(ops / pairs, 2)
        let done = DoneCounter(pairs)
        var units: [PingPongUnit] = []
        for _ in 0..<pairs {
            let a = PingPongUnit(scheduler: s, turns: turns, done: done)
            let b = PingPongUnit(scheduler: s, turns: 0, done: done)
            a.partner = b
            b.partner = a
            // Both share a's counter: point b's "partner.shared" at a's by swapping roles.
            units += [a, b]
        }
        // a.runTurn decrements b.shared, b.runTurn decrements a.shared: give both halves.
        for i in stride(from: 0, to: units.count, by: 2) {
            units[i].shared.store(turns / 2, ordering: .relaxed)
            units[i + 1].shared.store(turns - turns / 2, ordering: .relaxed)
        }
        let t0 = Measure.now()
        for i in stride(from: 0, to: units.count, by: 2) { try? s.schedule(units[i]) }
        done.semaphore.wait()
        let elapsed = Double(Measure.now() - t0) / 1e9
        return Double(pairs * turns) / elapsed
    }

    // MARK: idle CPU

    /// CPU seconds (user + system) of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// CPU time burnt by the whole process over `seconds` of an idle started scheduler.
    static func idleCPU(seconds: Double) -> (cpuSeconds: Double, workers: Int) {
        let s = scheduler(workers: CPUAvailability.current().usableCPUs)
        defer { s.shutdown() }
        // Let the workers spin out and park.
        let unit = YieldUnit(turns: 1, done: DoneCounter(1))
        try? s.schedule(unit)
        usleep(200_000)
        let before = processCPUSeconds()
        usleep(UInt32(seconds * 1e6))
        return (processCPUSeconds() - before, s.workerCount)
    }

    // MARK: actors

    actor MNCounter {
        let executor: MNSerialExecutor
        var count = 0
        init(scheduler: Scheduler) { executor = MNSerialExecutor(scheduler: scheduler) }
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        func increment() { count += 1 }
    }

    actor DefaultCounter {
        var count = 0
        func increment() { count += 1 }
    }

    /// Runs `body` as a task (on `executor` if given) and blocks until it finishes.
    static func blockOn(_ executor: (any TaskExecutor)?, _ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            await body()
            done.signal()
        }
        done.wait()
    }

    /// ns per awaited call, one caller doing `calls` sequential calls.
    static func nsPerCall(calls: Int, caller: (any TaskExecutor)?, _ call: @escaping @Sendable () async -> Void) -> Double {
        let elapsed = Atomic<UInt64>(0)
        blockOn(caller) {
            for _ in 0..<min(calls / 10, 1000) { await call() }  // warm-up
            let t0 = Measure.now()
            for _ in 0..<calls { await call() }
            elapsed.store(Measure.now() - t0, ordering: .relaxed)
        }
        return Double(elapsed.load(ordering: .relaxed)) / Double(calls)
    }

    /// ns per awaited call with `callers` concurrent caller tasks sharing one actor
    /// (wall time / total calls).
    static func nsPerCallConcurrent(calls: Int, callers: Int, caller: (any TaskExecutor)?,
                                    _ call: @escaping @Sendable () async -> Void) -> Double {
        let elapsed = Atomic<UInt64>(0)
        blockOn(nil) {
            let t0 = Measure.now()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<callers {
                    group.addTask(executorPreference: caller) {
                        for _ in 0..<calls / callers { await call() }
                    }
                }
            }
            elapsed.store(Measure.now() - t0, ordering: .relaxed)
        }
        return Double(elapsed.load(ordering: .relaxed)) / Double(calls / callers * callers)
    }

    // MARK: the table

    static func run(_ options: BenchOptions) -> [BenchTable] {
        var table = BenchTable(name: "scheduler", title: "MNScheduler",
                               columns: ["workload", "1 worker", "2 workers", "2w / 1w", "spread (1w, 2w)", "CPUs busy (2w)"])
        table.unit = "M units/s"
        let ops = options.operations
        for (name, body) in [("yield (1000 units, .more)", yieldRate), ("ping-pong (100 pairs, next slot)", pingPongRate)] {
            let one = Measure.medianRate(runs: options.runs) { body(1, ops) }
            // CPU time / wall time of the 2-worker runs: below ~2 the OS did not give the
            // pool two cores (a shared machine), which caps the 2w / 1w ratio.
            var busy: [Double] = []
            let two = Measure.medianRate(runs: options.runs) {
                let cpu0 = processCPUSeconds(), wall0 = Measure.now()
                let rate = body(2, ops)
                busy.append((processCPUSeconds() - cpu0) / (Double(Measure.now() - wall0) / 1e9))
                return rate
            }
            table.rows.append([name, Measure.mops(one.median), Measure.mops(two.median),
                               Measure.ratio(two.median / one.median),
                               String(format: "%.2f, %.2f", one.spread, two.spread),
                               String(format: "%.2f", Measure.median(busy))])
            table.bars.append((label: "\(name), 1 worker", value: one.median / 1e6))
            table.bars.append((label: "\(name), 2 workers", value: two.median / 1e6))
        }
        table.notes.append("Units/s = turns run per second (M). Median of \(options.runs) runs; \(ops) turns per run. Scheduler defaults otherwise (MN_* environment honoured).")

        let idle = idleCPU(seconds: 2)
        table.notes.append(String(format: "Idle: %d workers started and idle for 2 s burnt %.1f ms of process CPU time (getrusage), %.2f%% of one CPU.",
                                  idle.workers, idle.cpuSeconds * 1e3, idle.cpuSeconds / 2 * 100))

        // Executors: same actor body, custom vs default executor, in the same run.
        let s = scheduler(workers: CPUAvailability.current().usableCPUs)
        defer { s.shutdown() }
        let mn = MNCounter(scheduler: s)
        let plain = DefaultCounter()
        let fast = max(ops / 10, 10_000)
        let slow = max(ops / 100, 2_000)
        let te = s.taskExecutor
        func median(_ calls: Int, _ caller: (any TaskExecutor)?, _ call: @escaping @Sendable () async -> Void) -> Double {
            Measure.median((0..<options.runs).map { _ in nsPerCall(calls: calls, caller: caller, call) })
        }
        let baseline = median(fast, nil) { await plain.increment() }
        let mnOnPool = median(fast, te) { await mn.increment() }
        let mnFromDefault = median(slow, nil) { await mn.increment() }
        let plainFromPool = median(fast, te) { await plain.increment() }
        func medianConcurrent(_ caller: (any TaskExecutor)?, _ call: @escaping @Sendable () async -> Void) -> Double {
            Measure.median((0..<options.runs).map { _ in nsPerCallConcurrent(calls: fast, callers: 4, caller: caller, call) })
        }
        let baseline4 = medianConcurrent(nil) { await plain.increment() }
        let mn4 = medianConcurrent(te) { await mn.increment() }
        var actors = BenchTable(name: "scheduler-actors", title: "Native actor: MNSerialExecutor vs default executor",
                                columns: ["actor executor", "caller runs on", "ns per awaited call", "vs default actor"])
        actors.unit = "ns per call"
        let rows: [(String, String, Double)] = [
            ("default (Swift)", "default pool", baseline),
            ("MNSerialExecutor", "MNTaskExecutor (fast path)", mnOnPool),
            ("MNSerialExecutor", "default pool", mnFromDefault),
            ("default (Swift)", "MNTaskExecutor", plainFromPool),
        ]
        for (executor, caller, ns) in rows {
            actors.rows.append([executor, caller, String(format: "%.0f", ns), Measure.ratio(ns / baseline)])
            actors.bars.append((label: "\(executor) ← \(caller)", value: ns))
        }
        actors.rows.append(["default (Swift)", "default pool, 4 concurrent callers", String(format: "%.0f", baseline4), Measure.ratio(1)])
        actors.rows.append(["MNSerialExecutor", "MNTaskExecutor, 4 concurrent callers", String(format: "%.0f", mn4), Measure.ratio(mn4 / baseline4)])
        actors.bars.append((label: "default ← default pool ×4", value: baseline4))
        actors.bars.append((label: "MNSerialExecutor ← MNTaskExecutor ×4", value: mn4))
        actors.notes.append("One caller task, sequential awaited calls to `func increment()`; median of \(options.runs) runs of \(fast) calls (\(slow) for the cross-pool row). \(s.workerCount) workers. Target: MNSerialExecutor with an on-pool caller within 2× of the default actor.")
        return [table, actors]
    }
}

/// Prints the scheduler's effective configuration (`--print-config`).
func printConfiguration() {
    do {
        print(try SchedulerConfiguration().resolved().description)
    } catch {
        RingBench.fail("\(error)")
    }
}
