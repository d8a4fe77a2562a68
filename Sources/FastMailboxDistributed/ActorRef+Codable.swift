// ActorRef+Codable — an ActorRef inside a message or a call's arguments travels as a
// ClusterActorID. Encoding needs a ClusterSystem in the encoder's userInfo (the cluster's
// own coders put it there): a local ref is exported under a temporary name (ask reply
// slots: removed after their reply or when the ask ends), a remote ref keeps its id.
// Decoding makes a remote ref, or finds the local export when the id names this node.

import Distributed
import FastMailbox

extension ActorRef: Codable where Message: Codable {
    public func encode(to encoder: any Encoder) throws {
        guard let system = encoder.userInfo[.actorSystemKey] as? ClusterSystem else {
            throw ClusterError.serialization("an ActorRef can only be encoded by a ClusterSystem's coder")
        }
        let id: ClusterActorID
        if let remote = foreignRecipient as? RemoteRecipient<Message> {
            id = remote.target
        } else {
            id = ClusterActorID(node: system.node, name: system.exportCarried(self))
            (encoder.userInfo[.fastMailboxCarriedRefs] as? CarriedRefs)?.names.append(id.name)
        }
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }

    public init(from decoder: any Decoder) throws {
        guard let system = decoder.userInfo[.actorSystemKey] as? ClusterSystem else {
            throw ClusterError.serialization("an ActorRef can only be decoded by a ClusterSystem's coder")
        }
        let id = try decoder.singleValueContainer().decode(ClusterActorID.self)
        if id.node == system.node {
            guard let local = system.exportedRef(Message.self, named: id.name) else {
                throw ClusterError.unknownActor(id)
            }
            self = local
        } else {
            self = system.decodedRef(Message.self, for: id)
        }
    }
}

extension ClusterSystem {
    /// The local ref exported as `name`, if it handles `Message`.
    func exportedRef<Message: Codable & Sendable>(_ type: Message.Type, named name: String) -> ActorRef<Message>? {
        state.withLock { $0.exports[name]?.ref as? ActorRef<Message> }
    }
}
