// ClusterSystem+Heartbeat — the failure detector and everything else that runs per tick:
// heartbeats out, silent peers declared down, lost links redialled, call and wait
// timeouts, ended ask reply slots unexported.
//
// Detector: a peer incarnation is declared down when nothing (heartbeat or any other
// frame) arrived from it for `failureTimeout` — whether its link is open (a partition, a
// hung process) or closed (a crash) — by the tick that first sees the silence. Ticks
// come from a timer every `heartbeatInterval`, or from the caller (`tick(now:)`, with an
// injected clock: deterministic tests). A peer that never said hello cannot be declared
// down (there is no incarnation to name); it is simply dialled again.

import FastMailbox
import Foundation
import Logging

extension ClusterSystem {
    /// Runs one round of the failure detector at `now` (default: the settings' clock):
    /// sends heartbeats, declares silent peers down, redials lost links, fails calls past
    /// their timeout. Called by the timer unless ``ClusterSettings/automaticTicks`` is false.
    public func tick(now: UInt64? = nil) {
        let now = now ?? settings.clock()
        let timeout = settings.failureTimeout.saturatingNanoseconds
        let interval = settings.heartbeatInterval.saturatingNanoseconds
        struct Work {
            var silent: [NodeID] = []
            var dial: [Endpoint] = []
            var expired: [(id: UInt64, call: PendingCall)] = []
            var lateWaiters: [(Endpoint, CheckedContinuation<NodeID, any Error>)] = []
            var finishedExports: [String] = []
        }
        let work = state.withLock { state -> Work in
            var work = Work()
            guard !state.shuttingDown else { return work }
            for (endpoint, peer) in state.peers {
                if let node = peer.node, !state.downNodes.contains(node) {
                    if now > peer.lastHeard, now - peer.lastHeard > timeout {
                        work.silent.append(node)
                        continue
                    }
                }
                if let link = peer.link, let info = state.links[ObjectIdentifier(link)] {
                    _ = link.send(.heartbeat(Frame.Heartbeat(tellsReceived: info.tellsReceived)))
                } else if settings.endpoint < endpoint, now &- (peer.lastDial ?? 0) >= interval {
                    // Also after the peer was declared down: a restarted node (a new
                    // incarnation) may be listening there; the old one's hello is refused.
                    state.peers[endpoint]!.lastDial = now
                    work.dial.append(endpoint)
                }
                if let deadline = peer.waitDeadline, now >= deadline, let waiters = state.peerWaiters.removeValue(forKey: endpoint) {
                    state.peers[endpoint]!.waitDeadline = nil
                    work.lateWaiters += waiters.map { (endpoint, $0) }
                }
            }
            for (id, call) in state.pending where now >= call.deadline {
                state.pending[id] = nil
                work.expired.append((id, call))
            }
            for (name, export) in state.exports where name.hasPrefix(ClusterSystem.temporaryExportPrefix) && export.isFinished() {
                state.exports[name] = nil
                work.finishedExports.append(name)
            }
            return work
        }
        for node in work.silent {
            declareDown(node, reason: "no frame for \(settings.failureTimeout)")
        }
        for endpoint in work.dial { transport.dial(endpoint) }
        for (id, call) in work.expired {
            recordCallOutcome(endpoint: call.endpoint, ok: false, started: nil)
            call.continuation.resume(throwing: ClusterError.timedOut(callID: id, after: call.timeout))
        }
        for (endpoint, waiter) in work.lateWaiters { waiter.resume(throwing: ClusterError.noSuchPeer(endpoint)) }
    }

    /// Declares `node` down (S4): its link closes, its pending calls fail with
    /// ``ClusterError/nodeDown(_:)`` at once, its unacknowledged tells become dead letters
    /// here, the watch proxies of refs to its actors stop (watchers get `Terminated`), and
    /// ``nodeDownEvents()`` yields. Idempotent. The failure detector calls it; you may too
    /// (an operator's decision, or an external membership service).
    public func declareDown(_ node: NodeID, reason: String) {
        let endpoint = node.endpoint
        let taken = state.withLock { state -> (link: (any ClusterLink)?, calls: [PendingCall], doubtful: ArraySlice<UnackedTell>,
                                               proxies: [any RemoteRefEntry], subscribers: [AsyncStream<NodeDown>.Continuation])? in
            guard state.downNodes.insert(node).inserted else { return nil }
            var link: (any ClusterLink)?
            var doubtful: ArraySlice<UnackedTell> = []
            if state.peers[endpoint]?.node == node {
                link = state.peers[endpoint]!.link
                state.peers[endpoint]!.link = nil
                doubtful = state.peers[endpoint]!.takeUnacknowledged()
            }
            let calls = state.pending.filter { $0.value.endpoint == endpoint && (link == nil || $0.value.link == ObjectIdentifier(link!)) }
            for key in calls.keys { state.pending[key] = nil }
            let proxies = state.remoteRefs.filter { $0.key.node == node }.map(\.value)
            return (link, Array(calls.values), doubtful, proxies, Array(state.nodeDownSubscribers.values))
        }
        guard let taken else { return }
        peerLogger(endpoint).warning("node down", metadata: ["cluster/peerNode": "\(node)", "cluster/reason": "\(reason)",
                                                             "cluster/failedCalls": "\(taken.calls.count)",
                                                             "cluster/tellsInDoubt": "\(taken.doubtful.count)"])
        taken.link?.close()
        for call in taken.calls {
            recordCallOutcome(endpoint: call.endpoint, ok: false, started: nil)
            call.continuation.resume(throwing: ClusterError.nodeDown(node))
        }
        publishInDoubt(taken.doubtful)
        for proxy in taken.proxies { proxy.nodeDown("\(node): \(reason)") }
        let event = NodeDown(node: node, reason: reason)
        for subscriber in taken.subscribers { subscriber.yield(event) }
    }
}
