// ClusterSystem+DistributedActorSystem — the language's half: ids for local actors,
// resolving ids to local actors or remote proxies, and remote calls (see ClusterSystem.swift
// for the invariants S1–S5).

import Distributed
import FastMailbox
import Foundation
import MNScheduler

extension ClusterSystem {
    public func assignID<Act>(_ actorType: Act.Type) -> ClusterActorID
        where Act: DistributedActor, Act.ID == ClusterActorID {
        let name = state.withLock { state -> String in
            state.nextName += 1
            return "$\(state.nextName)"
        }
        let executor = MNSerialExecutor(scheduler: actors.scheduler)
        executors.withLock { $0[name] = executor }
        return ClusterActorID(node: node, name: name)
    }

    public func actorReady<Act>(_ actor: Act) where Act: DistributedActor, Act.ID == ClusterActorID {
        let entry = LocalActor(actor: actor, deadLetterID: actors.nextForeignActorID())
        state.withLock { $0.actors[actor.id.name] = entry }
    }

    public func resignID(_ id: ClusterActorID) {
        state.withLock { state in
            state.actors[id.name] = nil
            state.aliases = state.aliases.filter { $0.value != id.name }
        }
        executors.withLock { _ = $0.removeValue(forKey: id.name) }
    }

    /// Makes a local distributed actor addressable by other nodes as `name`
    /// (``actorID(named:on:timeout:)`` there). The name is freed when the actor is
    /// deinitialised. Registering a name again moves it to the new actor.
    public func register<Act>(_ actor: Act, as name: String) where Act: DistributedActor, Act.ID == ClusterActorID {
        state.withLock { $0.aliases[name] = actor.id.name }
    }

    /// The local actor for `name` (a generated name or a registered alias).
    func localActor(named name: String) -> (any DistributedActor)? {
        state.withLock { state in
            let key = state.aliases[name] ?? name
            return state.actors[key]?.actor
        }
    }

    public func resolve<Act>(id: ClusterActorID, as actorType: Act.Type) throws -> Act?
        where Act: DistributedActor, Act.ID == ClusterActorID {
        guard id.node == node else { return nil }  // remote: the runtime makes a proxy
        guard let actor = localActor(named: id.name) else { throw ClusterError.unknownActor(id) }
        guard let typed = actor as? Act else {
            throw ClusterError.serialization("actor \(id) is a \(type(of: actor)), not a \(Act.self)")
        }
        return typed
    }

    public func makeInvocationEncoder() -> ClusterInvocationEncoder {
        ClusterInvocationEncoder(system: self)
    }

    public func remoteCall<Act, Err, Res>(
        on actor: Act, target: RemoteCallTarget, invocation: inout ClusterInvocationEncoder,
        throwing: Err.Type, returning: Res.Type
    ) async throws -> Res where Act: DistributedActor, Act.ID == ClusterActorID, Err: Error, Res: Codable {
        let reply = try await call(actor.id, target: target, invocation: invocation)
        guard let value = reply.value else { throw ClusterError.serialization("reply without a value for \(Res.self)") }
        do {
            return try makeDecoder().decode(Res.self, from: value)
        } catch {
            throw ClusterError.serialization("result \(Res.self): \(error)")
        }
    }

    public func remoteCallVoid<Act, Err>(
        on actor: Act, target: RemoteCallTarget, invocation: inout ClusterInvocationEncoder, throwing: Err.Type
    ) async throws where Act: DistributedActor, Act.ID == ClusterActorID, Err: Error {
        _ = try await call(actor.id, target: target, invocation: invocation)
    }

    /// Sends a call frame and waits for its reply (S2: exactly one of reply, timeout,
    /// link lost, node down, shutdown ends it).
    func call(_ recipient: ClusterActorID, target: RemoteCallTarget,
              invocation: ClusterInvocationEncoder) async throws -> Frame.Reply {
        if let error = invocation.encodingError { throw error }
        let endpoint = recipient.node.endpoint
        let started = settings.clock()
        let timeout = settings.callTimeout
        let bytes = invocation.arguments.reduce(0) { $0 + $1.count }
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Frame.Reply, any Error>) in
            let refused: ClusterError? = state.withLock { state in
                if state.shuttingDown { return .shutDown }
                if state.downNodes.contains(recipient.node) { return .nodeDown(recipient.node) }
                guard var peer = state.peers[endpoint] else { return .noSuchPeer(endpoint) }
                guard let link = peer.link, let current = peer.node else { return .nodeDown(recipient.node) }
                if current != recipient.node { return .unknownActor(recipient) }  // an older incarnation
                state.nextCallID += 1
                let callID = state.nextCallID
                let frame = Frame.call(Frame.Call(callID: callID, recipient: recipient, target: target.identifier,
                                                  genericSubstitutions: invocation.genericSubstitutions,
                                                  arguments: invocation.arguments))
                guard link.send(frame) else { return .linkLost(endpoint) }
                state.pending[callID] = PendingCall(continuation: continuation, endpoint: endpoint,
                                                    link: ObjectIdentifier(link),
                                                    deadline: started &+ timeout.saturatingNanoseconds,
                                                    started: started, timeout: timeout)
                peer.statistics.callsSent += 1
                peer.statistics.bytesSent += bytes
                state.peers[endpoint] = peer
                return nil
            }
            if let refused {
                recordCallOutcome(endpoint: endpoint, ok: false, started: nil)
                continuation.resume(throwing: refused)
            }
        }
        if let error = reply.error { throw error }
        return reply
    }

    /// Counts a finished call (and its round trip) for its peer.
    func recordCallOutcome(endpoint: Endpoint, ok: Bool, started: UInt64?) {
        let now = settings.clock()
        let metrics = state.withLock { state -> PeerMetrics? in
            guard state.peers[endpoint] != nil else { return nil }
            if ok { state.peers[endpoint]!.statistics.callsSucceeded += 1 } else { state.peers[endpoint]!.statistics.callsFailed += 1 }
            return state.peers[endpoint]!.metrics
        }
        guard let metrics else { return }
        if ok { metrics.callsSucceeded.increment() } else { metrics.callsFailed.increment() }
        if let started, now >= started { metrics.roundTrip.recordNanoseconds(Int64(clamping: now - started)) }
    }

    /// A JSON encoder that can encode actor refs and distributed actors of this node.
    func makeEncoder(collecting carried: CarriedRefs? = nil) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.userInfo[.actorSystemKey] = self
        if let carried { encoder.userInfo[.fastMailboxCarriedRefs] = carried }
        return encoder
    }

    /// A JSON decoder that can decode actor refs and distributed actors of this node.
    func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[.actorSystemKey] = self
        return decoder
    }
}

extension CodingUserInfoKey {
    /// Collects the export names of refs encoded into one tell (ActorRef+Codable).
    static let fastMailboxCarriedRefs = CodingUserInfoKey(rawValue: "fastmailbox.carriedRefs")!
}

/// The export names of the sender's refs encoded into one message.
final class CarriedRefs: @unchecked Sendable {
    // @unchecked: used by one encoding on one thread, then read by that thread.
    var names: [String] = []
}
