// ActorSystemService — an ActorSystem as a swift-service-lifecycle Service: it runs until
// the ServiceGroup shuts down gracefully (SIGTERM, a trigger, another service ending), then
// drains the actors with ActorSystem.gracefulShutdown and returns. A separate product, so
// the core FastMailbox module stays free of swift-service-lifecycle and its dependencies.

// Built only with the package trait ServiceLifecycleSupport (see Package.swift).
#if ServiceLifecycleSupport
import FastMailbox
import Logging
import ServiceLifecycle

/// Runs an ``FastMailbox/ActorSystem`` as a ServiceLifecycle `Service`.
///
/// ```swift
/// let system = try ActorSystem(logger: logger)
/// let group = ServiceGroup(
///     services: [ActorSystemService(system: system), httpServer],  // shut down in reverse order
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger)
/// try await group.run()
/// ```
///
/// Behaviour:
/// - `run()` waits, without holding a thread, until graceful shutdown is triggered or its
///   task is cancelled; then it calls ``FastMailbox/ActorSystem/gracefulShutdown(timeout:)``
///   (every actor finishes what its mailbox holds, for up to `shutdownTimeout`), hands the
///   report to `onShutdown`, and returns. It never throws.
/// - A `ServiceGroup` shuts its services down in reverse order: list this service *before*
///   the HTTP server (or whatever feeds the actors), so the server stops taking requests
///   first and the actors then drain what it sent them.
/// - With a `metricsReporter`, the reporter samples for as long as the service runs and
///   takes a last sample after the shutdown.
public struct ActorSystemService: Service {
    /// The system this service runs and shuts down.
    public let system: ActorSystem
    /// How long the actors may take to drain (see ``FastMailbox/ActorSystem/shutdown(timeout:)``).
    public let shutdownTimeout: Duration
    /// Publishes the system's metrics while the service runs (optional).
    public let metricsReporter: ActorSystemMetricsReporter?
    /// Called once with the shutdown's report, before `run()` returns.
    public let onShutdown: (@Sendable (ShutdownReport) -> Void)?

    /// Creates the service; nothing starts until the service group runs it.
    public init(system: ActorSystem, shutdownTimeout: Duration = .seconds(10),
                metricsReporter: ActorSystemMetricsReporter? = nil,
                onShutdown: (@Sendable (ShutdownReport) -> Void)? = nil) {
        self.system = system
        self.shutdownTimeout = shutdownTimeout
        self.metricsReporter = metricsReporter
        self.onShutdown = onShutdown
    }

    /// Waits for graceful shutdown (or cancellation), then shuts the system down and returns.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            if let metricsReporter {
                group.addTask { await metricsReporter.run() }
            }
            // Throws CancellationError when the task is cancelled instead: shut down then too.
            try? await ServiceLifecycle.gracefulShutdown()
            let report = await system.gracefulShutdown(timeout: shutdownTimeout)
            onShutdown?(report)
            group.cancelAll()
        }
    }
}
#endif
