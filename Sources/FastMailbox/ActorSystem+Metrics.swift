// ActorSystem+Metrics: the figures a service watches, in code and through a sampling
// swift-metrics reporter. Nothing here runs per delivered message.

import Metrics
import MNScheduler
import Synchronization

/// Relaxed counters behind ``ActorSystem/metrics``.
final class SystemCounters: Sendable {
    /// Supervisor restarts carried out.
    let restarts = Atomic<Int>(0)
    /// Actors stopped with ``TerminationReason/failed(_:)``.
    let failedStops = Atomic<Int>(0)
    /// Overflow appends of cells gone from the registry or of rings given back.
    let retiredOverflows = Atomic<Int>(0)
    /// Mailbox rings given back by idle actors.
    let mailboxRingsReleased = Atomic<Int>(0)
}

/// The runtime's figures at one moment: read with ``ActorSystem/metrics``, or publish with
/// ``ActorSystemMetricsReporter``.
///
/// Cumulative except ``liveActors``; each figure exact, but read one after another. New
/// fields may come in minor versions.
public struct ActorSystemMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Actors not yet stopped and drained (routees count, a pool's ref does not).
    public var liveActors: Int
    /// Messages handed to behaviours.
    public var delivered: Int
    /// Dead letters by reason.
    public var deadLetters: DeadLetterCounts
    /// Sends that found the ring full and overflowed (an actor falling behind).
    public var mailboxOverflows: Int
    /// Supervisor restarts carried out.
    public var restarts: Int
    /// Actors stopped because they failed (stop, escalate, or restarts used up).
    public var failedStops: Int
    /// The scheduler's figures.
    public var scheduler: SchedulerMetrics

    public var description: String {
        "live actors \(liveActors), delivered \(delivered), dead letters \(deadLetters.total) "
            + "(stopped \(deadLetters.recipientStopped), ask timed out \(deadLetters.askTimedOut), "
            + "duplicate reply \(deadLetters.duplicateReply), shutdown \(deadLetters.systemShutDown), mailbox full \(deadLetters.mailboxFull)), "
            + "mailbox overflows \(mailboxOverflows), restarts \(restarts), failed stops \(failedStops); "
            + "scheduler: \(scheduler)"
    }
}

extension ActorSystem {
    /// One pass over the live actors under the registry lock: for sampling, not per
    /// request. Any thread.
    public var metrics: ActorSystemMetrics {
        let (live, delivered, overflows) = registryTotals()
        return ActorSystemMetrics(liveActors: live, delivered: delivered,
                                  deadLetters: deadLetters.countsByReason,
                                  mailboxOverflows: overflows,
                                  restarts: counters.restarts.load(ordering: .relaxed),
                                  failedStops: counters.failedStops.load(ordering: .relaxed),
                                  scheduler: scheduler.metrics)
    }
}

/// Publishes an ``ActorSystem``'s ``ActorSystem/metrics`` to swift-metrics every
/// `interval` — sampled, never per message.
///
/// Metrics (labels start with `labelPrefix`, default `"fastmailbox"`; every one carries
/// `dimensions`, by default `[("system", system.name)]`):
/// - `fastmailbox_live_actors` (gauge),
/// - `fastmailbox_messages_delivered_total`, `fastmailbox_mailbox_overflows_total`,
///   `fastmailbox_restarts_total`, `fastmailbox_failed_stops_total` (counters),
/// - `fastmailbox_dead_letters_total` (counter, with a `reason` dimension:
///   `recipient_stopped`, `ask_timed_out`, `duplicate_reply`, `system_shut_down`,
///   `mailbox_full`),
/// - the scheduler's: `fastmailbox_scheduler_parks_total`, `fastmailbox_scheduler_steals_total`,
///   `fastmailbox_scheduler_idle_searches_total` (counters; `WorkerMetrics.idleSearches`),
///   `fastmailbox_scheduler_injection_queue_depth`,
///   `fastmailbox_scheduler_blocked_workers` (in `blocking {}` or detected),
///   `fastmailbox_scheduler_spare_threads` and `fastmailbox_scheduler_worker_busy_ratio`
///   (gauges; the last with a `worker` dimension).
///
/// Counters grow by the change since the previous sample. Run ``run()`` in a task (or the
/// `FastMailboxServiceLifecycle` product's service) or call ``report()`` from any thread.
public final class ActorSystemMetricsReporter: Sendable {
    /// The system sampled.
    public let system: ActorSystem
    /// Time between samples.
    public let interval: Duration

    private let liveActors: Gauge
    private let delivered: Counter
    private let overflows: Counter
    private let restarts: Counter
    private let failedStops: Counter
    private let deadLetters: [Counter]
    private let parks: Counter
    private let steals: Counter
    private let idleSearches: Counter
    private let injectionDepth: Gauge
    private let blockedWorkers: Gauge
    private let spareThreads: Gauge
    private let busyRatio: [Gauge]
    private let previous = Lock<ActorSystemMetrics?>(nil)

    /// Creates a reporter; it publishes nothing until ``run()`` or ``report()``.
    /// `factory`: by default `MetricsSystem.factory`, read now.
    public init(system: ActorSystem, interval: Duration = .seconds(10), labelPrefix: String = "fastmailbox",
                dimensions: [(String, String)]? = nil, factory: (any MetricsFactory)? = nil) {
        self.system = system
        self.interval = interval
        let factory = factory ?? MetricsSystem.factory
        let dimensions = dimensions ?? [("system", system.name)]
        liveActors = Gauge(label: "\(labelPrefix)_live_actors", dimensions: dimensions, factory: factory)
        delivered = Counter(label: "\(labelPrefix)_messages_delivered_total", dimensions: dimensions, factory: factory)
        parks = Counter(label: "\(labelPrefix)_scheduler_parks_total", dimensions: dimensions, factory: factory)
        steals = Counter(label: "\(labelPrefix)_scheduler_steals_total", dimensions: dimensions, factory: factory)
        idleSearches = Counter(label: "\(labelPrefix)_scheduler_idle_searches_total", dimensions: dimensions, factory: factory)
        injectionDepth = Gauge(label: "\(labelPrefix)_scheduler_injection_queue_depth", dimensions: dimensions, factory: factory)
        blockedWorkers = Gauge(label: "\(labelPrefix)_scheduler_blocked_workers", dimensions: dimensions, factory: factory)
        spareThreads = Gauge(label: "\(labelPrefix)_scheduler_spare_threads", dimensions: dimensions, factory: factory)
        busyRatio = (0..<system.scheduler.workerCount).map { index in
            Gauge(label: "\(labelPrefix)_scheduler_worker_busy_ratio", dimensions: dimensions + [("worker", String(index))],
                  factory: factory)
        }
        overflows = Counter(label: "\(labelPrefix)_mailbox_overflows_total", dimensions: dimensions, factory: factory)
        restarts = Counter(label: "\(labelPrefix)_restarts_total", dimensions: dimensions, factory: factory)
        failedStops = Counter(label: "\(labelPrefix)_failed_stops_total", dimensions: dimensions, factory: factory)
        deadLetters = ActorSystemMetrics.DeadLetterCounts().byLabel.map { reason, _ in
            Counter(label: "\(labelPrefix)_dead_letters_total", dimensions: dimensions + [("reason", reason)],
                    factory: factory)
        }
    }

    /// Takes one sample and publishes it; returns the figures it read.
    @discardableResult
    public func report() -> ActorSystemMetrics {
        previous.withLock { previous in
            let now = system.metrics
            let before = previous
            func delta(_ value: (ActorSystemMetrics) -> Int) -> Int { max(0, value(now) - (before.map(value) ?? 0)) }
            liveActors.record(now.liveActors)
            delivered.increment(by: delta(\.delivered))
            overflows.increment(by: delta(\.mailboxOverflows))
            restarts.increment(by: delta(\.restarts))
            failedStops.increment(by: delta(\.failedStops))
            parks.increment(by: delta(\.scheduler.parks))
            steals.increment(by: delta(\.scheduler.steals))
            idleSearches.increment(by: delta(\.scheduler.idleSearches))
            injectionDepth.record(now.scheduler.injectionQueueDepth)
            blockedWorkers.record(now.scheduler.blocking.workersInBlockingSections + now.scheduler.blocking.workersStalled)
            spareThreads.record(now.scheduler.blocking.spareThreadsRunning)
            for (gauge, worker) in zip(busyRatio, now.scheduler.workers) {
                if let fraction = worker.busyFraction { gauge.record(fraction) }
            }
            let old = before?.deadLetters.byLabel
            for (index, (_, count)) in now.deadLetters.byLabel.enumerated() {
                deadLetters[index].increment(by: max(0, count - (old?[index].1 ?? 0)))
            }
            previous = now
            return now
        }
    }

    /// Samples every ``interval`` until cancelled, then once more (shutdown's figures).
    public func run() async {
        while !Task.isCancelled {
            report()
            do { try await Task.sleep(for: interval) } catch { break }
        }
        report()
    }
}

extension ActorSystemMetrics {
    /// Dead letters so far, by ``DeadLetterReason`` (a snapshot).
    public struct DeadLetterCounts: Sendable, Hashable {
        /// ``DeadLetterReason/recipientStopped``.
        public var recipientStopped: Int
        /// ``DeadLetterReason/askTimedOut(requestID:)``.
        public var askTimedOut: Int
        /// ``DeadLetterReason/duplicateReply(requestID:)``.
        public var duplicateReply: Int
        /// ``DeadLetterReason/systemShutDown``.
        public var systemShutDown: Int
        /// ``DeadLetterReason/mailboxFull``.
        public var mailboxFull: Int

        /// All reasons together (equals ``DeadLetterOffice/count`` when read at the same moment).
        public var total: Int { recipientStopped + askTimedOut + duplicateReply + systemShutDown + mailboxFull }

        init(recipientStopped: Int = 0, askTimedOut: Int = 0, duplicateReply: Int = 0, systemShutDown: Int = 0,
             mailboxFull: Int = 0) {
            self.recipientStopped = recipientStopped
            self.askTimedOut = askTimedOut
            self.duplicateReply = duplicateReply
            self.systemShutDown = systemShutDown
            self.mailboxFull = mailboxFull
        }

        /// The reasons with their metric dimension values, in a fixed order.
        var byLabel: [(String, Int)] {
            [("recipient_stopped", recipientStopped), ("ask_timed_out", askTimedOut),
             ("duplicate_reply", duplicateReply), ("system_shut_down", systemShutDown), ("mailbox_full", mailboxFull)]
        }
    }
}
