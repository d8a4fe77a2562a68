/// How a ``ClusterSystem`` finds its peers and decides that one is down.
public struct ClusterSettings: Sendable {
    /// Where this node listens (and how others name it).
    public var endpoint: Endpoint
    /// The static membership: every other node's endpoint. The smaller endpoint of each
    /// pair dials the larger; a node not listed may still dial in and is then known.
    public var peers: [Endpoint]
    /// How often a heartbeat goes out on every link, dead links are redialled, and call
    /// timeouts are checked (so timeouts resolve to about this interval).
    public var heartbeatInterval: Duration
    /// Silence after which a peer is declared down (its pending calls fail, its watchers
    /// hear of it). At least twice ``heartbeatInterval``.
    public var failureTimeout: Duration
    /// Timeout of a remote call (as the default of `ask`).
    public var callTimeout: Duration
    /// When false, nothing runs on a timer: call ``ClusterSystem/tick(now:)`` yourself
    /// (tests do, with a clock they advance, so failure detection is deterministic).
    public var automaticTicks: Bool
    /// The clock that stamps heartbeats and deadlines, in nanoseconds (monotonic by default).
    public var clock: @Sendable () -> UInt64

    /// Settings with the defaults: heartbeats every 200 ms, down after 2 s of silence,
    /// calls time out after 5 s, ticks on a timer.
    public init(endpoint: Endpoint, peers: [Endpoint] = [],
                heartbeatInterval: Duration = .milliseconds(200),
                failureTimeout: Duration = .seconds(2),
                callTimeout: Duration = .seconds(5),
                automaticTicks: Bool = true,
                clock: @escaping @Sendable () -> UInt64 = ClusterSettings.monotonicNow) {
        self.endpoint = endpoint
        self.peers = peers.filter { $0 != endpoint }
        self.heartbeatInterval = heartbeatInterval
        self.failureTimeout = max(failureTimeout, heartbeatInterval * 2)
        self.callTimeout = callTimeout
        self.automaticTicks = automaticTicks
        self.clock = clock
    }

    /// The default clock: monotonic nanoseconds.
    public static let monotonicNow: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
}

import Dispatch
