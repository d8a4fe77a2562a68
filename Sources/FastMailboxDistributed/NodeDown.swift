/// A peer node incarnation was declared down (``ClusterSystem/nodeDownEvents()``).
///
/// Once down, an incarnation stays down: its links are refused and calls to its actors
/// fail with ``ClusterError/nodeDown(_:)``. A restarted node (new incarnation) is a new
/// peer.
public struct NodeDown: Sendable, Hashable, CustomStringConvertible {
    /// The incarnation that went down.
    public let node: NodeID
    /// Why (no heartbeat within the failure timeout, a newer incarnation said hello, …).
    public let reason: String

    public var description: String { "NodeDown(\(node): \(reason))" }
}
