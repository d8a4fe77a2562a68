import FastMailbox

/// What an `ActorRef<Message>` to an actor on another node points at: `deliver` encodes
/// the message and hands it to the cluster system, which sends it on the peer's link or,
/// when the peer is down or not connected, publishes it as a dead letter here.
///
/// Thread-safety: immutable; `deliver` may be called from any thread (ClusterSystem's
/// lock orders concurrent sends).
final class RemoteRecipient<Message: Codable & Sendable>: ForeignRecipient, @unchecked Sendable {
    // @unchecked: immutable after init; `system` is weak (the system caches refs).
    let id: FastMailbox.ActorID
    let target: ClusterActorID
    weak var system: ClusterSystem?
    let actors: ActorSystem

    init(id: FastMailbox.ActorID, target: ClusterActorID, system: ClusterSystem) {
        self.id = id
        self.target = target
        self.system = system
        self.actors = system.actors
    }

    var name: String { target.description }

    @discardableResult
    func deliver(_ message: Message) -> Bool {
        guard let system else {
            actors.publishForeignDeadLetter(message, recipient: id, recipientName: name, reason: .systemShutDown)
            return false
        }
        return system.sendTell(message, to: target, recipientID: id)
    }

    /// Remote actors are not stopped through a ref (stop them on their node).
    func stop(_ mode: StopMode) {}

    /// A message carrying this ref as its reply-to became a dead letter here: the asker's
    /// node fails that ask at once.
    func requestDeadLettered() {
        system?.sendTellFailed(toNodeOf: target)
    }
}
