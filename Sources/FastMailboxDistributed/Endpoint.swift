/// Where a node listens: a host and a port. Two incarnations of a node (before and after
/// a restart) share an endpoint; ``NodeID`` tells them apart.
public struct Endpoint: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// Host name or address (e.g. `"127.0.0.1"`).
    public var host: String
    /// TCP port (or any number that names the node on an in-memory transport).
    public var port: Int

    /// Makes an endpoint.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Orders by host, then port: the smaller endpoint of a pair dials the larger one, so
    /// each pair of nodes has exactly one link.
    public static func < (lhs: Endpoint, rhs: Endpoint) -> Bool {
        (lhs.host, lhs.port) < (rhs.host, rhs.port)
    }

    public var description: String { "\(host):\(port)" }
}
