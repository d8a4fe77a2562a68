/// The identity of a distributed actor or an exported actor across the cluster: the node
/// incarnation it lives on and its name there.
///
/// `name` is either a name the actor was registered under (``ClusterSystem/register(_:as:)``,
/// ``ClusterSystem/export(_:as:)``) — stable, so other nodes can address it knowing only
/// the node — or a generated one (`"$17"`). Equal ids name the same actor incarnation:
/// an id from a node's earlier incarnation never reaches a later one.
public struct ClusterActorID: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The node incarnation the actor lives on.
    public var node: NodeID
    /// The actor's name on that node.
    public var name: String

    /// Makes an id (to address a well-known actor on a known node incarnation).
    public init(node: NodeID, name: String) {
        self.node = node
        self.name = name
    }

    public var description: String { "\(name)@\(node)" }
}
