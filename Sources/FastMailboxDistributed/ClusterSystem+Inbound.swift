// ClusterSystem+Inbound — what arrives from the transport: links opening and closing,
// and frames (see ClusterSystem.swift, invariants S1–S5).

import Distributed
import FastMailbox
import Foundation
import Logging

/// A call that reached a node with no such actor: what its dead letter carries.
public struct UndeliverableCall: Sendable, CustomStringConvertible {
    /// The actor addressed.
    public let recipient: ClusterActorID
    /// The distributed function called.
    public let target: String
    public var description: String { "call \(target) to \(recipient)" }
}

/// A tell that reached a node with no such export, or could not be decoded there: what
/// its dead letter carries (the message's bytes, since its type is unknown there).
public struct UndeliverableTell: Sendable, CustomStringConvertible {
    /// The actor addressed.
    public let recipient: ClusterActorID
    /// The message's JSON bytes.
    public let payload: Data
    public var description: String { "tell (\(payload.count) bytes) to \(recipient)" }
}

extension ClusterSystem {
    public func linkOpened(_ link: any ClusterLink, dialled: Endpoint?) {
        let accepted = state.withLock { state -> Bool in
            if state.shuttingDown { return false }
            state.links[ObjectIdentifier(link)] = LinkState(link: link, peer: dialled)
            return true
        }
        guard accepted else { link.close(); return }
        _ = link.send(.hello(Frame.Hello(node: node, expected: dialled)))
    }

    public func linkClosed(_ link: any ClusterLink) {
        let id = ObjectIdentifier(link)
        let (failed, doubtful, endpoint) = state.withLock { state -> ([PendingCall], ArraySlice<UnackedTell>, Endpoint?) in
            guard let closed = state.links.removeValue(forKey: id) else { return ([], [], nil) }
            var doubtful: ArraySlice<UnackedTell> = []
            if let endpoint = closed.peer, state.peers[endpoint]?.link === link {
                state.peers[endpoint]!.link = nil
                doubtful = state.peers[endpoint]!.takeUnacknowledged()
            }
            let failed = state.pending.filter { $0.value.link == id }
            for key in failed.keys { state.pending[key] = nil }
            return (Array(failed.values), doubtful, closed.peer)
        }
        if let endpoint {
            peerLogger(endpoint).info("link closed", metadata: ["cluster/failedCalls": "\(failed.count)",
                                                                 "cluster/tellsInDoubt": "\(doubtful.count)"])
        }
        for call in failed {
            recordCallOutcome(endpoint: call.endpoint, ok: false, started: nil)
            call.continuation.resume(throwing: ClusterError.linkLost(call.endpoint))
        }
        publishInDoubt(doubtful)
    }

    public func received(_ frame: Frame, on link: any ClusterLink) {
        let now = settings.clock()
        let id = ObjectIdentifier(link)
        if case .hello(let hello) = frame {
            handleHello(hello, on: link, now: now)
            return
        }
        // Any frame proves the peer alive.
        let known = state.withLock { state -> Bool in
            guard let endpoint = state.links[id]?.peer, state.peers[endpoint]?.link === link else { return false }
            state.peers[endpoint]!.lastHeard = now
            return true
        }
        guard known else { return }  // before hello, or after the link was replaced: ignored
        switch frame {
        case .hello: break
        case .heartbeat(let heartbeat):
            acknowledge(heartbeat.tellsReceived, on: link)
        case .call(let call):
            handleCall(call, on: link)
        case .reply(let reply):
            acknowledge(reply.tellsReceived, on: link)
            handleReply(reply)
        case .tell(let tell):
            handleTell(tell, on: link)
        case .tellFailed(let failure):
            failCarriedRefs(failure.carriedRefs)
        }
    }

    private func handleHello(_ hello: Frame.Hello, on link: any ClusterLink, now: UInt64) {
        let endpoint = hello.node.endpoint
        enum Outcome {
            case refused
            case accepted(replaced: (any ClusterLink)?, olderIncarnation: NodeID?,
                          waiters: [CheckedContinuation<NodeID, any Error>], doubtful: ArraySlice<UnackedTell>)
        }
        let outcome = state.withLock { state -> Outcome in
            guard !state.shuttingDown, state.links[ObjectIdentifier(link)] != nil,
                  !state.downNodes.contains(hello.node) else { return .refused }
            var peer = state.peers[endpoint] ?? PeerState(endpoint: endpoint, now: now, localNode: node)
            let replaced = peer.link.flatMap { $0 === link ? nil : $0 }
            let older = peer.node.flatMap { $0 != hello.node ? $0 : nil }
            // Tells still unacknowledged belong to the link being replaced: in doubt (P2).
            let doubtful = peer.link === link ? [] : peer.takeUnacknowledged()
            peer.node = hello.node
            peer.link = link
            peer.lastHeard = now
            peer.waitDeadline = nil
            state.peers[endpoint] = peer
            state.links[ObjectIdentifier(link)]?.peer = endpoint
            let waiters = state.peerWaiters.removeValue(forKey: endpoint) ?? []
            return .accepted(replaced: replaced, olderIncarnation: older, waiters: waiters, doubtful: doubtful)
        }
        switch outcome {
        case .refused:
            peerLogger(endpoint).warning("hello refused (node down or shutting down)", metadata: ["cluster/peerNode": "\(hello.node)"])
            link.close()
        case .accepted(let replaced, let older, let waiters, let doubtful):
            publishInDoubt(doubtful)
            peerLogger(endpoint).info("link up", metadata: ["cluster/peerNode": "\(hello.node)", "cluster/link": "\(link.remoteDescription)"])
            if let older { declareDown(older, reason: "a newer incarnation \(hello.node) said hello") }
            replaced?.close()
            for waiter in waiters { waiter.resume(returning: hello.node) }
        }
    }

    private func acknowledge(_ received: UInt64, on link: any ClusterLink) {
        state.withLock { state in
            guard let endpoint = state.links[ObjectIdentifier(link)]?.peer, state.peers[endpoint]?.link === link else { return }
            state.peers[endpoint]!.acknowledge(upTo: received)
        }
    }

    private func handleCall(_ call: Frame.Call, on link: any ClusterLink) {
        let bytes = call.arguments.reduce(0) { $0 + $1.count }
        countReceived(bytes: bytes, on: link)
        guard call.recipient.node == node, let actor = localActor(named: call.recipient.name) else {
            actors.publishForeignDeadLetter(UndeliverableCall(recipient: call.recipient, target: call.target),
                                            recipient: FastMailbox.ActorID(rawValue: 0),
                                            recipientName: call.recipient.description, reason: .recipientStopped)
            sendReply(on: link, callID: call.callID, value: nil, error: .unknownActor(call.recipient))
            return
        }
        var decoder = ClusterInvocationDecoder(system: self, call: call)
        let handler = ClusterResultHandler(system: self, link: link, callID: call.callID)
        let target = RemoteCallTarget(call.target)
        // S5: runs synchronously up to the hop onto the actor's executor, so the calls of
        // this link reach the actor in arrival order.
        Task.immediate {
            do {
                try await self.executeDistributedTarget(on: actor, target: target, invocationDecoder: &decoder,
                                                        handler: handler)
            } catch {
                self.sendReply(on: link, callID: call.callID, value: nil,
                               error: (error as? ClusterError) ?? .remoteError(type: "\(type(of: error))", description: "\(error)"))
            }
        }
    }

    func sendReply(on link: any ClusterLink, callID: UInt64, value: Data?, error: ClusterError?) {
        state.withLock { state in
            let id = ObjectIdentifier(link)
            guard let info = state.links[id] else { return }
            let frame = Frame.reply(Frame.Reply(callID: callID, value: value, error: error, tellsReceived: info.tellsReceived))
            if link.send(frame), let endpoint = info.peer {
                state.peers[endpoint]?.statistics.bytesSent += value?.count ?? 0
            }
        }
    }

    private func handleReply(_ reply: Frame.Reply) {
        guard let call = state.withLock({ $0.pending.removeValue(forKey: reply.callID) }) else {
            logger.debug("late reply dropped", metadata: ["cluster/call": "\(reply.callID)"])
            return
        }
        let bytes = reply.value?.count ?? 0
        state.withLock { $0.peers[call.endpoint]?.statistics.bytesReceived += bytes }
        state.withLock { $0.peers[call.endpoint]?.metrics }?.bytesReceived.increment(by: bytes)
        recordCallOutcome(endpoint: call.endpoint, ok: reply.error == nil, started: call.started)
        call.continuation.resume(returning: reply)
    }

    private func handleTell(_ tell: Frame.Tell, on link: any ClusterLink) {
        countReceived(bytes: tell.payload.count, on: link)
        defer {
            state.withLock { $0.links[ObjectIdentifier(link)]?.tellsReceived += 1 }
        }
        let export = tell.recipient.node == node ? state.withLock({ $0.exports[tell.recipient.name] }) : nil
        guard let export else {
            actors.publishForeignDeadLetter(UndeliverableTell(recipient: tell.recipient, payload: tell.payload),
                                            recipient: FastMailbox.ActorID(rawValue: 0),
                                            recipientName: tell.recipient.description, reason: .recipientStopped)
            sendTellFailed(tell.carriedRefs, error: .unknownActor(tell.recipient), on: link)
            return
        }
        switch export.deliver(tell.payload, self) {
        case .delivered:
            if export.isOneShot { state.withLock { _ = $0.exports.removeValue(forKey: tell.recipient.name) } }
        case .deadLettered:
            sendTellFailed(tell.carriedRefs, error: .recipientStopped(tell.recipient), on: link)
        case .undecodable(let reason):
            actors.publishForeignDeadLetter(UndeliverableTell(recipient: tell.recipient, payload: tell.payload),
                                            recipient: export.deadLetterID, recipientName: tell.recipient.description,
                                            reason: .recipientStopped)
            peerLogger(nil).error("undecodable tell", metadata: ["cluster/recipient": "\(tell.recipient)", "cluster/error": "\(reason)"])
            sendTellFailed(tell.carriedRefs, error: .serialization(reason), on: link)
        }
    }

    private func sendTellFailed(_ carried: [String], error: ClusterError, on link: any ClusterLink) {
        guard !carried.isEmpty else { return }
        _ = link.send(.tellFailed(Frame.TellFailed(carriedRefs: carried, error: error)))
    }

    private func countReceived(bytes: Int, on link: any ClusterLink) {
        let metrics = state.withLock { state -> PeerMetrics? in
            guard let endpoint = state.links[ObjectIdentifier(link)]?.peer else { return nil }
            state.peers[endpoint]?.statistics.bytesReceived += bytes
            return state.peers[endpoint]?.metrics
        }
        metrics?.bytesReceived.increment(by: bytes)
    }

    /// Fails the asks whose reply slots were exported under these names (a tell carrying
    /// them could not be delivered).
    func failCarriedRefs(_ names: [String]) {
        let exports = state.withLock { state in names.compactMap { state.exports.removeValue(forKey: $0) } }
        for export in exports { export.failPendingAsk() }
    }

    func peerLogger(_ endpoint: Endpoint?) -> Logger {
        var logger = self.logger
        if let endpoint { logger[metadataKey: "cluster/peer"] = "\(endpoint)" }
        return logger
    }
}
