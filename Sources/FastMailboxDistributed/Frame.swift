import Foundation

/// One unit on a link between two nodes. Frames are `Codable`: a transport serializes
/// them as it likes (``FrameCodec`` gives the JSON form the gRPC transport uses).
///
/// A link carries, in order: one ``Hello`` from each side first, then any mix of the
/// others. Frames sent on one link by one sending thread arrive in the order sent; a link
/// that closes may lose the frames still in flight (see the Guarantees article: per-sender
/// FIFO while a link lives, at most once across a reconnect).
public enum Frame: Codable, Sendable {
    /// The first frame each side sends: who it is.
    case hello(Hello)
    /// Liveness, and the acknowledgement of tells received so far on this link.
    case heartbeat(Heartbeat)
    /// A distributed-actor call.
    case call(Call)
    /// The answer to a ``Call``, matched by its id.
    case reply(Reply)
    /// A message to an exported `ActorRef` (``ClusterSystem/export(_:as:)``).
    case tell(Tell)
    /// A tell could not be delivered on the receiving node: the asks whose reply-to refs
    /// it carried fail at once on the sending node.
    case tellFailed(TellFailed)

    /// The sender's node incarnation.
    public struct Hello: Codable, Sendable {
        /// Who is speaking.
        public var node: NodeID
        /// Who it believes it is talking to (nil when it accepted the link).
        public var expected: Endpoint?
    }

    /// Sent every heartbeat interval on every live link.
    public struct Heartbeat: Codable, Sendable {
        /// Tells received on this link from the other side so far (delivered or
        /// dead-lettered here): the other side drops them from its in-doubt buffer.
        public var tellsReceived: UInt64
    }

    /// A call of a `distributed func`.
    public struct Call: Codable, Sendable {
        /// Unique per calling node; the reply carries it back.
        public var callID: UInt64
        /// The actor called.
        public var recipient: ClusterActorID
        /// The target (the mangled name of the distributed function).
        public var target: String
        /// Mangled names of the generic substitutions.
        public var genericSubstitutions: [String]
        /// Each argument, JSON-encoded.
        public var arguments: [Data]
    }

    /// The outcome of a ``Call``.
    public struct Reply: Codable, Sendable {
        /// The call answered.
        public var callID: UInt64
        /// The JSON-encoded return value (nil for `Void` or an error).
        public var value: Data?
        /// Why it failed, if it did.
        public var error: ClusterError?
        /// Tells received on this link so far (as in ``Heartbeat``): a call that follows
        /// tells acknowledges them when it returns.
        public var tellsReceived: UInt64
    }

    /// A message to an exported actor.
    public struct Tell: Codable, Sendable {
        /// The exported actor (its export name on the receiving node).
        public var recipient: ClusterActorID
        /// The JSON-encoded message.
        public var payload: Data
        /// Export names of the sender's refs carried inside the message (reply-to refs of
        /// asks): failed at once if this tell cannot be delivered.
        public var carriedRefs: [String]
    }

    /// Sent back when a ``Tell`` could not be delivered.
    public struct TellFailed: Codable, Sendable {
        /// The ``Tell/carriedRefs`` of the failed tell.
        public var carriedRefs: [String]
        /// Why.
        public var error: ClusterError
    }

    /// A short name for logs and dead letters.
    public var kind: String {
        switch self {
        case .hello: return "hello"
        case .heartbeat: return "heartbeat"
        case .call: return "call"
        case .reply: return "reply"
        case .tell: return "tell"
        case .tellFailed: return "tellFailed"
        }
    }
}
