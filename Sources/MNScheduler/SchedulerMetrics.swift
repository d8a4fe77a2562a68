// SchedulerMetrics — the scheduler's figures, read in code or published by FastMailbox's
// ActorSystemMetricsReporter (modelled on tokio's RuntimeMetrics). Counters are written by
// one thread each (a worker's own parks and steals, the monitor's busy samples) with
// relaxed loads and stores, never per message; reading them is a snapshot.

/// One worker's figures (see ``SchedulerMetrics``).
public struct WorkerMetrics: Sendable, Hashable {
    /// Times the worker went to sleep for lack of work.
    public var parks: Int
    /// Units it took from other workers' queues (or a stalled worker's next slot, or one
    /// waiting out another worker's long turn).
    public var steals: Int
    /// Of `steals`, units taken from another worker's next slot while that worker stayed
    /// inside one turn (SchedulerProtocols.md, "Long turns"), without the blocking monitor.
    public var longTurnSteals: Int = 0
    /// Times it ran out of work after a stream and searched on before it parked
    /// (SchedulerProtocols.md, "The idle search").
    public var idleSearches: Int = 0
    /// Its local run queue's length now.
    public var localQueueDepth: Int
    /// The share of the monitor's samples that found it busy (0…1; nil when blocking
    /// detection, and so the monitor, is off).
    public var busyFraction: Double?
}

/// The scheduler's figures at one moment (any thread; each figure is exact, not all
/// taken at one instant).
public struct SchedulerMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Per worker, in index order.
    public var workers: [WorkerMetrics]
    /// Units waiting in the injection queue (work from outside the pool).
    public var injectionQueueDepth: Int
    /// Blocking sections, stalled workers and spare threads.
    public var blocking: SchedulerBlockingMetrics

    /// Parks over all workers.
    public var parks: Int { workers.reduce(0) { $0 + $1.parks } }
    /// Steals over all workers.
    public var steals: Int { workers.reduce(0) { $0 + $1.steals } }
    /// Long-turn next-slot steals over all workers (included in `steals`).
    public var longTurnSteals: Int { workers.reduce(0) { $0 + $1.longTurnSteals } }
    /// Idle searches over all workers.
    public var idleSearches: Int { workers.reduce(0) { $0 + $1.idleSearches } }

    public var description: String {
        let busy = workers.map { $0.busyFraction.map { String(Int(($0 * 100).rounded())) + "%" } ?? "?" }
        return "workers \(workers.count) (busy \(busy.joined(separator: " "))), parks \(parks), steals \(steals), "
            + "injection queue \(injectionQueueDepth), \(blocking)"
    }
}

extension Scheduler {
    /// The scheduler's figures now (see ``SchedulerMetrics``). Cheap: a few loads per worker.
    public var metrics: SchedulerMetrics {
        let released = core.ringsReleased.load(ordering: .acquiring)  // after shutdown: no queues
        let workerFigures = core.shared.indices.map { index -> WorkerMetrics in
            let shared = core.shared[index]
            let samples = shared.samples.load(ordering: .relaxed)
            return WorkerMetrics(
                parks: shared.parks.load(ordering: .relaxed),
                steals: shared.steals.load(ordering: .relaxed),
                longTurnSteals: shared.longTurnSteals.load(ordering: .relaxed),
                idleSearches: shared.idleSearches.load(ordering: .relaxed),
                localQueueDepth: released ? 0 : core.queues[index].count,
                busyFraction: samples > 0 ? Double(shared.busySamples.load(ordering: .relaxed)) / Double(samples) : nil)
        }
        return SchedulerMetrics(workers: workerFigures, injectionQueueDepth: released ? 0 : core.injection.count, blocking: blockingMetrics)
    }
}
