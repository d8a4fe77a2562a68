import FastMailbox
import Metrics

/// What a ClusterSystem knows about one peer endpoint (guarded by the system's lock).
///
/// Invariants (with ClusterSystem's lock held):
///  (P1) `link` is set only between the peer's hello on that link and the link's close or
///       the peer being declared down; `node` is the incarnation that said hello on it.
///  (P2) `unacked` holds, in send order, every tell sent on `link` and not yet
///       acknowledged; `tellsSentOnLink` numbers them (1, 2, …) per link. A tell leaves it
///       exactly once: acknowledged, or published as a dead letter (in doubt) when the
///       link goes.
struct PeerState {
    let endpoint: Endpoint
    var node: NodeID?
    var link: (any ClusterLink)?
    var lastHeard: UInt64
    var lastDial: UInt64?
    /// Earliest deadline of a `peerNode(at:)` waiter (ticks fail waiters past it).
    var waitDeadline: UInt64?
    var tellsSentOnLink: UInt64 = 0
    var unacked: [UnackedTell] = []
    var unackedHead = 0
    var statistics = PeerStatistics()
    let metrics: PeerMetrics

    init(endpoint: Endpoint, now: UInt64, localNode: NodeID) {
        self.endpoint = endpoint
        self.lastHeard = now
        self.metrics = PeerMetrics(local: localNode.endpoint, peer: endpoint)
    }

    /// Drops the tells the peer acknowledged (cumulative count on the current link).
    mutating func acknowledge(upTo received: UInt64) {
        while unackedHead < unacked.count, unacked[unackedHead].sequence <= received {
            unackedHead += 1
            statistics.tellsAcknowledged += 1
            statistics.tellsUnacknowledged -= 1
        }
        if unackedHead > 1_024, unackedHead * 2 > unacked.count {
            unacked.removeFirst(unackedHead)
            unackedHead = 0
        }
    }

    /// Takes every unacknowledged tell (the link went): they become in doubt.
    mutating func takeUnacknowledged() -> ArraySlice<UnackedTell> {
        let taken = unacked[unackedHead...]
        statistics.tellsInDoubt += taken.count
        statistics.tellsUnacknowledged -= taken.count
        unacked = []
        unackedHead = 0
        tellsSentOnLink = 0
        return taken
    }
}

/// A tell sent and not yet acknowledged: enough to publish it as a dead letter.
struct UnackedTell: Sendable {
    let sequence: UInt64
    let message: any Sendable
    let recipientID: ActorID
    let recipientName: String
}

/// What a ClusterSystem knows about one link (guarded by the system's lock).
struct LinkState {
    let link: any ClusterLink
    /// The endpoint we dialled (nil for an accepted link until the peer's hello).
    var peer: Endpoint?
    /// Tells received on this link (delivered or dead-lettered here): acknowledged to the
    /// peer in heartbeats and replies.
    var tellsReceived: UInt64 = 0
}

/// A call waiting for its reply.
struct PendingCall {
    let continuation: CheckedContinuation<Frame.Reply, any Error>
    let endpoint: Endpoint
    let link: ObjectIdentifier
    let deadline: UInt64
    let started: UInt64
    let timeout: Duration
}
