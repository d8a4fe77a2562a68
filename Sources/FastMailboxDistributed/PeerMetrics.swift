import Metrics

/// Per-peer figures published through swift-metrics (whatever backend the process
/// bootstrapped; no-ops otherwise). Labels: `fastmailbox_cluster_*`, dimensions `node`
/// (this node's endpoint) and `peer`.
///
/// Thread-safety: swift-metrics handlers are thread-safe; this struct is immutable.
struct PeerMetrics: Sendable {
    let callsSucceeded: Counter
    let callsFailed: Counter
    let tellsSent: Counter
    let tellsReceived: Counter
    let bytesSent: Counter
    let bytesReceived: Counter
    let roundTrip: Timer

    init(local: Endpoint, peer: Endpoint) {
        let dimensions = [("node", "\(local)"), ("peer", "\(peer)")]
        callsSucceeded = Counter(label: "fastmailbox_cluster_calls_total", dimensions: dimensions + [("outcome", "ok")])
        callsFailed = Counter(label: "fastmailbox_cluster_calls_total", dimensions: dimensions + [("outcome", "failed")])
        tellsSent = Counter(label: "fastmailbox_cluster_tells_total", dimensions: dimensions + [("direction", "out")])
        tellsReceived = Counter(label: "fastmailbox_cluster_tells_total", dimensions: dimensions + [("direction", "in")])
        bytesSent = Counter(label: "fastmailbox_cluster_bytes_total", dimensions: dimensions + [("direction", "out")])
        bytesReceived = Counter(label: "fastmailbox_cluster_bytes_total", dimensions: dimensions + [("direction", "in")])
        roundTrip = Timer(label: "fastmailbox_cluster_call_round_trip", dimensions: dimensions)
    }
}
