// ClusterSystemService — a FastMailboxDistributed node as a swift-service-lifecycle
// Service: it serves until the ServiceGroup shuts down gracefully
// (SIGTERM, a trigger, another service ending), then leaves the cluster
// (ClusterSystem.shutdown: pending calls fail with shutDown, unacknowledged tells become
// dead letters, links close) and drains the node's actors (ActorSystem.gracefulShutdown).

// Built only with the package trait ServiceLifecycleSupport (see Package.swift).
#if ServiceLifecycleSupport
import FastMailbox
import FastMailboxDistributed
import ServiceLifecycle

/// Runs a ``FastMailboxDistributed/ClusterSystem`` node as a ServiceLifecycle `Service`.
///
/// ```swift
/// let cluster = try await ClusterSystem(settings: settings, actors: actors, transport: transport)
/// let group = ServiceGroup(services: [ClusterSystemService(cluster: cluster)],
///                          gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Behaviour: `run()` waits, without holding a thread, until graceful shutdown is
/// triggered or its task is cancelled; then it leaves the cluster (peers see the links
/// close; nothing sent to this node is silently lost: see the Distributed article's
/// guarantees), drains the node's actors for up to `shutdownTimeout`, hands the report to
/// `onShutdown`, and returns. It never throws.
public struct ClusterSystemService: Service {
    /// The node this service runs and shuts down.
    public let cluster: ClusterSystem
    /// How long the node's actors may take to drain.
    public let shutdownTimeout: Duration
    /// Called once with the actor system's shutdown report, before `run()` returns.
    public let onShutdown: (@Sendable (ShutdownReport) -> Void)?

    /// Creates the service; the node already serves (its init started the transport).
    public init(cluster: ClusterSystem, shutdownTimeout: Duration = .seconds(10),
                onShutdown: (@Sendable (ShutdownReport) -> Void)? = nil) {
        self.cluster = cluster
        self.shutdownTimeout = shutdownTimeout
        self.onShutdown = onShutdown
    }

    /// Waits for graceful shutdown (or cancellation), then leaves the cluster and drains.
    public func run() async throws {
        try? await ServiceLifecycle.gracefulShutdown()
        await cluster.shutdown()
        let report = await cluster.actors.gracefulShutdown(timeout: shutdownTimeout)
        onShutdown?(report)
    }
}
#endif
