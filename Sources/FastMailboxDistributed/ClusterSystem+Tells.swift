// ClusterSystem+Tells — remote ActorRefs: exporting local refs, making refs to remote
// actors, and sending tells (invariant S3 in ClusterSystem.swift).

import FastMailbox
import Foundation

extension ClusterSystem {
    /// Makes `ref` reachable from other nodes as `name` (``actorID(named:on:timeout:)``, or
    /// ``remoteRef(_:named:on:timeout:)``): their tells are decoded here and told to `ref` in the
    /// order each sender sent them. An event actor needs nothing else to be remote.
    /// Exporting a name again replaces the earlier ref.
    public func export<Message: Codable & Sendable>(_ ref: ActorRef<Message>, as name: String) {
        state.withLock { $0.exports[name] = ExportedActor(ref, oneShot: false) }
    }

    /// Removes an export; later tells to it are dead letters here.
    public func unexport(_ name: String) {
        state.withLock { _ = $0.exports.removeValue(forKey: name) }
    }

    /// An `ActorRef` to the actor exported as `name` on the node at `endpoint` (waits for
    /// that node's hello). Telling it looks exactly like a local tell.
    ///
    /// - Ordering: tells from one sender arrive in order while the link lives.
    /// - Peer down: a tell is published as a dead letter here (reason `.recipientStopped`),
    ///   an `ask` through it fails with `AskError.recipientStopped`, and watchers of the
    ///   ref get `Terminated` with reason `.failed("node down: …")`.
    public func remoteRef<Message: Codable & Sendable>(_ type: Message.Type = Message.self, named name: String,
                                                        on endpoint: Endpoint,
                                                        timeout: Duration = .seconds(10)) async throws -> ActorRef<Message> {
        remoteRef(type, for: try await actorID(named: name, on: endpoint, timeout: timeout))
    }

    /// An `ActorRef` to the remote actor `id` (see ``remoteRef(_:named:on:timeout:)``). One ref per
    /// id and message type is made and cached; an id of this node resolves to the local
    /// export.
    public func remoteRef<Message: Codable & Sendable>(_ type: Message.Type = Message.self,
                                                        for id: ClusterActorID) -> ActorRef<Message> {
        if let cached = state.withLock({ $0.remoteRefs[id] }) as? TypedRemoteRefEntry<Message> { return cached.ref }
        // The watch proxy's id becomes the ref's id (ForeignRecipient, F3).
        let proxy: ActorRef<RemoteWatchProxy.Message>
        do {
            proxy = try actors.spawn(options: SpawnOptions(supervisor: .stop)) { RemoteWatchProxy(actor: id) }
        } catch {
            // The actor system is shutting down: a ref without a proxy (not watchable).
            return ActorRef(foreign: RemoteRecipient<Message>(id: actors.nextForeignActorID(), target: id, system: self),
                            system: actors, watchProxy: nil as ActorRef<RemoteWatchProxy.Message>?)
        }
        let ref = ActorRef(foreign: RemoteRecipient<Message>(id: proxy.id, target: id, system: self),
                           system: actors, watchProxy: proxy)
        let (winner, alreadyDown) = state.withLock { state -> (ActorRef<Message>, Bool) in
            if let cached = state.remoteRefs[id] as? TypedRemoteRefEntry<Message> { return (cached.ref, false) }
            state.remoteRefs[id] = TypedRemoteRefEntry(ref: ref, proxy: proxy)
            return (ref, state.downNodes.contains(id.node))
        }
        if winner != ref { proxy.stop() }
        if alreadyDown { proxy.tell(.nodeDown("already down")) }
        return winner
    }

    /// A ref decoded from a message: remote refs to exported names are cached and
    /// watchable; reply slots of remote asks (temporary names) are neither.
    func decodedRef<Message: Codable & Sendable>(_ type: Message.Type, for id: ClusterActorID) -> ActorRef<Message> {
        if id.name.hasPrefix(ClusterSystem.temporaryExportPrefix) {
            return ActorRef(foreign: RemoteRecipient<Message>(id: actors.nextForeignActorID(), target: id, system: self),
                            system: actors, watchProxy: nil as ActorRef<RemoteWatchProxy.Message>?)
        }
        return remoteRef(type, for: id)
    }

    /// Names of exports made for refs carried inside messages start with this.
    static let temporaryExportPrefix = "ref$"

    /// The export name under which `ref` (a local ref carried inside a message) is reachable.
    func exportCarried<Message: Codable & Sendable>(_ ref: ActorRef<Message>) -> String {
        let name = "\(ClusterSystem.temporaryExportPrefix)\(ref.id.rawValue)"
        let oneShot = ref.isAskReplySlot
        state.withLock { state in
            if state.exports[name] == nil { state.exports[name] = ExportedActor(ref, oneShot: oneShot) }
        }
        return name
    }

    /// Encodes and sends one tell (S3): refused → dead letter here, false; sent → kept in
    /// the peer's unacknowledged buffer until acknowledged or in doubt.
    func sendTell<Message: Codable & Sendable>(_ message: Message, to target: ClusterActorID,
                                               recipientID: FastMailbox.ActorID) -> Bool {
        let carried = CarriedRefs()
        let payload: Data
        do {
            payload = try makeEncoder(collecting: carried).encode(message)
        } catch {
            peerLogger(target.node.endpoint).error("tell not encodable: dead-lettered",
                                                   metadata: ["cluster/recipient": "\(target)", "cluster/error": "\(error)"])
            actors.publishForeignDeadLetter(message, recipient: recipientID, recipientName: target.description,
                                            reason: .recipientStopped)
            return false
        }
        let endpoint = target.node.endpoint
        let metrics = state.withLock { state -> PeerMetrics? in
            guard !state.shuttingDown, !state.downNodes.contains(target.node),
                  var peer = state.peers[endpoint], let link = peer.link, peer.node == target.node else {
                state.peers[endpoint]?.statistics.tellsRefused += 1
                return nil
            }
            let frame = Frame.tell(Frame.Tell(recipient: target, payload: payload, carriedRefs: carried.names))
            guard link.send(frame) else {
                state.peers[endpoint]!.statistics.tellsRefused += 1
                return nil
            }
            peer.tellsSentOnLink += 1
            peer.unacked.append(UnackedTell(sequence: peer.tellsSentOnLink, message: message,
                                            recipientID: recipientID, recipientName: target.description))
            peer.statistics.tellsSent += 1
            peer.statistics.tellsUnacknowledged += 1
            peer.statistics.bytesSent += payload.count
            state.peers[endpoint] = peer
            return peer.metrics
        }
        guard let metrics else {
            actors.publishForeignDeadLetter(message, recipient: recipientID, recipientName: target.description,
                                            reason: .recipientStopped)
            return false
        }
        metrics.tellsSent.increment()
        metrics.bytesSent.increment(by: payload.count)
        return true
    }

    /// A message carrying a reply slot of `target`'s node was dead-lettered here: tell that
    /// node, so the ask fails at once.
    func sendTellFailed(toNodeOf target: ClusterActorID) {
        if target.node == node { failCarriedRefs([target.name]); return }
        state.withLock { state in
            guard let peer = state.peers[target.node.endpoint], peer.node == target.node, let link = peer.link else { return }
            _ = link.send(.tellFailed(Frame.TellFailed(carriedRefs: [target.name], error: .recipientStopped(target))))
        }
    }
}
