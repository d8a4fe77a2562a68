// ClusterSystem — Swift's DistributedActorSystem on FastMailbox: local distributed actors
// run on MNSerialExecutors of the node's scheduler; remote calls and tells travel as
// Frames over a ClusterTransport; heartbeats detect lost peers.
//
// Concurrency design (everything shared lives in `state`, one lock):
//  (S1) Every table — peers, links, local actors, exports, pending calls, remote refs —
//       is read and written only under `state`'s lock. No continuation is resumed, no
//       actor is told, no delegate or log is called while it is held; the one call made
//       under it is `ClusterLink.send`, which only queues (the transport contract), so
//       the order of sequence numbers given under the lock is the order on the wire.
//  (S2) A pending call is removed from `pending` exactly once — by its reply, its
//       timeout (tick), its link closing, its node going down, or shutdown — and only the
//       remover resumes its continuation: every call ends exactly once.
//  (S3) A tell is either refused (dead-lettered here at once) or sent and kept in its
//       peer's `unacked` until acknowledged or, when the link goes, dead-lettered here as
//       in doubt (PeerState P2). Nothing accepted is dropped without a report.
//  (S4) A node incarnation declared down stays down (`downNodes`): its hellos are
//       refused, so a call can never be answered by an incarnation after it was failed.
//  (S5) Inbound frames of one link are handled one at a time, in order (transport
//       contract). A call is started with `Task.immediate`, whose synchronous part runs
//       up to the hop onto the actor's executor, so the calls of one link reach the actor
//       in the order they arrived (per-sender FIFO), without waiting for each to finish.
// Executors: one MNSerialExecutor per local distributed actor, created in assignID and
// looked up by id (`executor(for:)`) — never stored in the actor, whose remote proxies
// have no initialised storage.

import Distributed
import Dispatch
import FastMailbox
import Foundation
import Logging
import MNScheduler

/// A node of a cluster: Swift's `DistributedActorSystem` whose local actors run on a
/// FastMailbox `ActorSystem`'s M:N scheduler and whose remote calls,
/// remote `ActorRef` tells and heartbeats travel over a ``ClusterTransport``.
///
/// ```swift
/// let actors = try ActorSystem(name: "node-a")
/// let cluster = try await ClusterSystem(settings: ClusterSettings(endpoint: a, peers: [b]),
///                                       actors: actors, transport: transport)
/// let counter = Counter(actorSystem: cluster)          // a local distributed actor
/// cluster.register(counter, as: "counter")             // addressable by name
/// let remote = try Counter.resolve(id: try await cluster.actorID(named: "counter", on: b),
///                                  using: cluster)
/// let total = try await remote.add(5)                  // a remote call
/// ```
///
/// - Ordering: calls and tells one sender (a thread, a task, an actor's turns) sends to
///   one remote actor arrive in the order sent while the link lives; across a reconnect
///   delivery is at most once (see the Guarantees article).
/// - Failures: a call to an unknown or stopped actor throws ``ClusterError/unknownActor(_:)``
///   (published there as a dead letter); a peer silent for ``ClusterSettings/failureTimeout``
///   is declared down — its pending calls throw ``ClusterError/nodeDown(_:)`` at once,
///   watchers of its actors' refs get `Terminated`, ``nodeDownEvents()`` yields.
/// - Thread-safety: every method may be called from any thread or task.
public final class ClusterSystem: DistributedActorSystem, ClusterTransportDelegate, @unchecked Sendable {
    // @unchecked: the mutable state is inside `state` (a lock; S1) or atomics; the rest is
    // immutable after init except `tickTimer`, set once in `start` before anything reads it.
    public typealias ActorID = ClusterActorID
    public typealias InvocationEncoder = ClusterInvocationEncoder
    public typealias InvocationDecoder = ClusterInvocationDecoder
    public typealias ResultHandler = ClusterResultHandler
    public typealias SerializationRequirement = any Codable

    /// This node's incarnation.
    public let node: NodeID
    /// The FastMailbox system whose scheduler runs the local distributed actors and whose
    /// dead letters and actors (exports, watch proxies) this node uses.
    public let actors: ActorSystem
    /// The settings it was started with.
    public let settings: ClusterSettings
    /// Logs per peer (`cluster/node`, `cluster/peer` metadata): links, node down, refused
    /// frames. Nothing is logged per message.
    public let logger: Logger
    let transport: any ClusterTransport

    struct State {
        var peers: [Endpoint: PeerState] = [:]
        var links: [ObjectIdentifier: LinkState] = [:]
        var actors: [String: LocalActor] = [:]
        var aliases: [String: String] = [:]
        var exports: [String: ExportedActor] = [:]
        var pending: [UInt64: PendingCall] = [:]
        var remoteRefs: [ClusterActorID: any RemoteRefEntry] = [:]
        var downNodes: Set<NodeID> = []
        var peerWaiters: [Endpoint: [CheckedContinuation<NodeID, any Error>]] = [:]
        var nodeDownSubscribers: [UInt64: AsyncStream<NodeDown>.Continuation] = [:]
        var nextName: UInt64 = 0
        var nextCallID: UInt64 = 0
        var nextSubscriber: UInt64 = 0
        var shuttingDown = false
    }

    let state = Lock<State>(State())
    /// Executors of local distributed actors, by their id's name (own lock: read on every
    /// hop onto an actor).
    let executors = Lock<[String: MNSerialExecutor]>([:])
    /// Runs actors whose executor is not (or no longer) registered.
    let fallbackExecutor: MNSerialExecutor
    nonisolated(unsafe) var tickTimer: (any DispatchSourceTimer)?

    /// Starts a node: listens through `transport` at `settings.endpoint`, dials the peers
    /// whose endpoints are larger than its own, and (with ``ClusterSettings/automaticTicks``)
    /// begins heartbeats.
    /// - Parameters:
    ///   - settings: endpoint, static peer list, heartbeat and timeouts.
    ///   - actors: the FastMailbox system to run on (this node does not shut it down).
    ///   - transport: the transport (a ``LoopbackTransport``, or `FastMailboxGRPC`'s).
    ///   - logger: base logger (default: the actor system's).
    /// - Throws: whatever the transport throws when it cannot listen.
    public init(settings: ClusterSettings, actors: ActorSystem, transport: any ClusterTransport,
                logger: Logger? = nil) async throws {
        self.node = NodeID.random(at: settings.endpoint)
        self.actors = actors
        self.settings = settings
        self.transport = transport
        var logger = logger ?? actors.logger
        logger[metadataKey: "cluster/node"] = "\(node)"
        self.logger = logger
        self.fallbackExecutor = MNSerialExecutor(scheduler: actors.scheduler)
        let now = settings.clock()
        state.withLock { state in
            for peer in settings.peers { state.peers[peer] = PeerState(endpoint: peer, now: now, localNode: node) }
        }
        try await transport.start(at: settings.endpoint, delegate: self)
        for peer in settings.peers where settings.endpoint < peer {
            dial(peer, now: now)
        }
        if settings.automaticTicks { startTimer() }
    }

    private func startTimer() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "fastmailbox.cluster.tick"))
        let interval = settings.heartbeatInterval.saturatingNanoseconds
        timer.schedule(deadline: .now() + .nanoseconds(Int(interval)), repeating: .nanoseconds(Int(interval)))
        timer.setEventHandler { [weak self] in self?.tick() }
        tickTimer = timer
        timer.resume()
    }

    func dial(_ endpoint: Endpoint, now: UInt64) {
        state.withLock { $0.peers[endpoint]?.lastDial = now }
        transport.dial(endpoint)
    }

    // MARK: executors

    /// The executor a local distributed actor with this id runs on (a fallback executor of
    /// the same scheduler for ids not registered here). Use it in your actor:
    /// `nonisolated var unownedExecutor: UnownedSerialExecutor { actorSystem.executor(for: id) }`
    /// (``ClusterActor`` does this for you).
    public func executor(for id: ClusterActorID) -> UnownedSerialExecutor {
        let executor = executors.withLock { $0[id.name] } ?? fallbackExecutor
        return executor.asUnownedSerialExecutor()
    }

    // MARK: peers

    /// The incarnation at `endpoint`, waiting until it has said hello (at most `timeout`;
    /// checked on ticks).
    /// - Throws: ``ClusterError/noSuchPeer(_:)`` on timeout, ``ClusterError/shutDown``.
    public func peerNode(at endpoint: Endpoint, timeout: Duration = .seconds(10)) async throws -> NodeID {
        let deadline = settings.clock() &+ timeout.saturatingNanoseconds
        return try await withCheckedThrowingContinuation { continuation in
            let result: Result<NodeID, ClusterError>? = state.withLock { state in
                if state.shuttingDown { return .failure(.shutDown) }
                if let peer = state.peers[endpoint], peer.link != nil, let node = peer.node { return .success(node) }
                if state.peers[endpoint] == nil {
                    state.peers[endpoint] = PeerState(endpoint: endpoint, now: settings.clock(), localNode: node)
                }
                let earlier = state.peers[endpoint]?.waitDeadline ?? .max
                state.peers[endpoint]?.waitDeadline = min(earlier, deadline)
                state.peerWaiters[endpoint, default: []].append(continuation)
                return nil
            }
            if let result {
                continuation.resume(with: result)
            } else if settings.endpoint < endpoint {
                // Don't wait for the next tick — unless a dial went out within the last
                // interval (two dials would race two links for one pair).
                let now = settings.clock()
                let last = state.withLock { $0.peers[endpoint]?.lastDial }
                if last.map({ now &- $0 >= settings.heartbeatInterval.saturatingNanoseconds }) ?? true {
                    dial(endpoint, now: now)
                }
            }
        }
    }

    /// The id of the actor registered (or exported) as `name` on the node at `endpoint`
    /// (waits for that node's hello like ``peerNode(at:timeout:)``).
    public func actorID(named name: String, on endpoint: Endpoint, timeout: Duration = .seconds(10)) async throws -> ClusterActorID {
        ClusterActorID(node: try await peerNode(at: endpoint, timeout: timeout), name: name)
    }

    /// Figures for the peer at `endpoint` (all zero if unknown).
    public func statistics(for endpoint: Endpoint) -> PeerStatistics {
        state.withLock { $0.peers[endpoint]?.statistics ?? PeerStatistics() }
    }

    /// Node incarnations declared down so far.
    public var downNodes: Set<NodeID> { state.withLock { $0.downNodes } }

    /// A stream of every ``NodeDown`` after this call (ends at ``shutdown()``).
    public func nodeDownEvents() -> AsyncStream<NodeDown> {
        let (stream, continuation) = AsyncStream<NodeDown>.makeStream()
        let key = state.withLock { state -> UInt64 in
            state.nextSubscriber += 1
            state.nodeDownSubscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.nodeDownSubscribers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: shutdown

    /// Leaves the cluster: stops the timer, fails every pending call with
    /// ``ClusterError/shutDown``, publishes unacknowledged tells as dead letters (in
    /// doubt), closes the links and the transport. Idempotent. Does not shut down
    /// ``actors`` (do that afterwards).
    public func shutdown() async {
        let (pending, links, doubtful, subscribers, waiters) = state.withLock { state in
            let first = !state.shuttingDown
            state.shuttingDown = true
            guard first else { return ([PendingCall](), [any ClusterLink](), [UnackedTell](), [AsyncStream<NodeDown>.Continuation](), [CheckedContinuation<NodeID, any Error>]()) }
            let pending = Array(state.pending.values)
            state.pending = [:]
            var doubtful: [UnackedTell] = []
            for key in Array(state.peers.keys) {
                doubtful += state.peers[key]!.takeUnacknowledged()
                state.peers[key]!.link = nil
            }
            let links = state.links.values.map(\.link)
            let subscribers = Array(state.nodeDownSubscribers.values)
            state.nodeDownSubscribers = [:]
            let waiters = state.peerWaiters.values.flatMap { $0 }
            state.peerWaiters = [:]
            return (pending, links, doubtful, subscribers, waiters)
        }
        tickTimer?.cancel()
        for call in pending { call.continuation.resume(throwing: ClusterError.shutDown) }
        for waiter in waiters { waiter.resume(throwing: ClusterError.shutDown) }
        publishInDoubt(doubtful)
        for link in links { link.close() }
        for subscriber in subscribers { subscriber.finish() }
        await transport.shutdown()
    }

    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }

    func publishInDoubt<S: Sequence>(_ tells: S) where S.Element == UnackedTell {
        for tell in tells {
            actors.publishForeignDeadLetter(tell.message, recipient: tell.recipientID, recipientName: tell.recipientName,
                                            reason: .recipientStopped)
        }
    }
}

/// A local distributed actor (weak: the actor's owners decide its life; resignID removes it).
struct LocalActor {
    weak var actor: (any DistributedActor)?
    /// For dead letters about it.
    let deadLetterID: FastMailbox.ActorID
}
