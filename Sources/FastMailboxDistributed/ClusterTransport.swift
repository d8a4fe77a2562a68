/// What carries frames between nodes: one long-lived, ordered, bidirectional link per
/// pair of nodes. ``LoopbackTransport`` (in memory) is in this module; the gRPC transport
/// is in the `FastMailboxGRPC` product of the nested package `Distributed/`.
///
/// Contract a transport must keep (``ClusterSystem`` relies on it):
/// - `start` begins accepting links; every link — accepted or dialled — is reported once
///   with ``ClusterTransportDelegate/linkOpened(_:dialled:)`` before any of its frames.
/// - Frames received on one link are handed to ``ClusterTransportDelegate/received(_:on:)``
///   one at a time, in the order the other side sent them (per sending thread).
/// - A link that ends, for any reason, is reported exactly once with
///   ``ClusterTransportDelegate/linkClosed(_:)``, after its last received frame.
/// - `dial` never blocks; a failed dial is simply not followed by `linkOpened` (the
///   system dials again on its next heartbeat tick).
public protocol ClusterTransport: Sendable {
    /// Starts listening at `endpoint` and reporting links to `delegate`.
    func start(at endpoint: Endpoint, delegate: any ClusterTransportDelegate) async throws
    /// Opens a link to `endpoint` unless one is open or being opened (idempotent).
    func dial(_ endpoint: Endpoint)
    /// Closes every link and stops listening; links are reported closed.
    func shutdown() async
}

/// One end of a link.
public protocol ClusterLink: AnyObject, Sendable {
    /// Queues `frame` for the other side, from any thread, without blocking. Frames queued
    /// by one thread go out in that order. Returns false when the link is closed (the
    /// frame was not queued).
    func send(_ frame: Frame) -> Bool
    /// Closes the link (idempotent); the delegate hears ``ClusterTransportDelegate/linkClosed(_:)``.
    func close()
    /// For logs: who is at the other end, as far as the transport knows.
    var remoteDescription: String { get }
}

/// Receives what a transport reports (``ClusterSystem`` is one).
public protocol ClusterTransportDelegate: AnyObject, Sendable {
    /// A link opened: accepted (`dialled` nil) or dialled to `dialled`.
    func linkOpened(_ link: any ClusterLink, dialled: Endpoint?)
    /// A frame arrived on `link` (serially per link, in order).
    func received(_ frame: Frame, on link: any ClusterLink)
    /// `link` closed; no frame of it follows.
    func linkClosed(_ link: any ClusterLink)
}
