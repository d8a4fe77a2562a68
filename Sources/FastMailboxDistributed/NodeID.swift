#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One incarnation of a node: its ``Endpoint`` and a random 64-bit incarnation number
/// chosen when its ``ClusterSystem`` starts.
///
/// A node that restarts on the same host and port gets a new incarnation, so ids of the
/// old incarnation's actors never reach the new one's actors: a frame addressed to an old
/// incarnation is refused (``ClusterError/unknownActor(_:)``).
public struct NodeID: Hashable, Codable, Sendable, CustomStringConvertible {
    /// Where the node listens.
    public var endpoint: Endpoint
    /// Chosen at start; differs between restarts (random, never 0).
    public var incarnation: UInt64

    /// Makes a node id (``ClusterSystem`` makes its own with ``random(at:)``).
    public init(endpoint: Endpoint, incarnation: UInt64) {
        self.endpoint = endpoint
        self.incarnation = incarnation
    }

    /// A fresh incarnation at `endpoint`.
    public static func random(at endpoint: Endpoint) -> NodeID {
        var generator = SystemRandomNumberGenerator()
        return NodeID(endpoint: endpoint, incarnation: generator.next() | 1)
    }

    public var description: String { "\(endpoint)#\(String(incarnation, radix: 16))" }
}
