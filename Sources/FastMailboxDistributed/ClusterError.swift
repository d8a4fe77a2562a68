/// Why a remote call, a remote `ask` or a cluster operation failed.
public enum ClusterError: Error, Hashable, Codable, Sendable, CustomStringConvertible {
    /// No actor with this id on its node (never existed, stopped, or the id names an older
    /// incarnation of the node). The receiving node published the request as a dead letter.
    case unknownActor(ClusterActorID)
    /// The recipient had stopped when the message arrived (published as a dead letter
    /// there).
    case recipientStopped(ClusterActorID)
    /// The peer's node was declared down by the failure detector, or was not connected.
    case nodeDown(NodeID)
    /// The link carrying the call closed before the reply came (across a reconnect a call
    /// is delivered at most once, so it is not retried).
    case linkLost(Endpoint)
    /// No peer is configured or connected at this endpoint.
    case noSuchPeer(Endpoint)
    /// No reply within the call timeout (a late reply is dropped and counted).
    case timedOut(callID: UInt64, after: Duration)
    /// The remote function threw; its description (errors are not shipped as values).
    case remoteError(type: String, description: String)
    /// Encoding or decoding an argument, a result or a frame failed.
    case serialization(String)
    /// The cluster system is shutting down.
    case shutDown

    public var description: String {
        switch self {
        case .unknownActor(let id): return "no actor \(id)"
        case .recipientStopped(let id): return "actor \(id) has stopped"
        case .nodeDown(let node): return "node \(node) is down"
        case .linkLost(let endpoint): return "the link to \(endpoint) closed before the reply"
        case .noSuchPeer(let endpoint): return "no peer at \(endpoint)"
        case .timedOut(let id, let after): return "call #\(id) timed out after \(after)"
        case .remoteError(let type, let description): return "remote \(type): \(description)"
        case .serialization(let what): return "serialization failed: \(what)"
        case .shutDown: return "the cluster system is shutting down"
        }
    }
}
