import FastMailbox

/// The local actor that stands for a remote actor so that `context.watch(remoteRef)` and
/// `await remoteRef.terminated` work: it does nothing until the remote node is declared
/// down, then stops with `TerminationReason.failed("node … is down: …")`.
///
/// Spawned by ``ClusterSystem`` (supervisor `.stop`), one per remote ref it hands out; its
/// id is the remote ref's id, so the `Terminated` names that ref.
public final class RemoteWatchProxy: EventActor {
    /// What the cluster system tells it.
    public enum Message: Sendable {
        /// The remote actor's node is down (the reason).
        case nodeDown(String)
    }

    /// The error its stop reports (`TerminationReason.failed` carries its description).
    public struct NodeDownError: Error, CustomStringConvertible {
        /// The remote actor.
        public let actor: ClusterActorID
        /// Why the node was declared down.
        public let reason: String
        public var description: String { "node down: \(actor.node) (\(reason))" }
    }

    let actor: ClusterActorID

    init(actor: ClusterActorID) { self.actor = actor }

    public func receive(_ message: Message, context: ActorContext<Message>) throws {
        switch message {
        case .nodeDown(let reason): throw NodeDownError(actor: actor, reason: reason)
        }
    }
}
