// LoopbackNetwork — an in-memory network for LoopbackTransport: who listens where, which
// pairs are partitioned, and the links it made.
//
// Invariants:
//  (N1) Every field is guarded by `state`'s lock; no delegate is called under it.
//  (N2) A killed endpoint has no listener and no open link: its links are closed (both
//       ends report linkClosed) and dials to it fail until a transport starts there again.
//  (N3) A partition drops frames silently in both directions (links stay open), so only
//       the failure detector can notice it — as with a real network that stops answering.

import MNScheduler

/// An in-memory network joining ``LoopbackTransport``s of one process: for tests and
/// single-process demos. Links are ordered and lossless unless you ``kill(_:)`` an endpoint
/// or ``partition(_:_:)`` two.
///
/// Thread-safety: every method may be called from any thread.
public final class LoopbackNetwork: Sendable {
    struct State {
        var listeners: [Endpoint: LoopbackTransport] = [:]
        var partitions: Set<Pair> = []
        var links: [LoopbackLink] = []
    }

    struct Pair: Hashable {
        let a: Endpoint, b: Endpoint
        init(_ x: Endpoint, _ y: Endpoint) { (a, b) = x < y ? (x, y) : (y, x) }
    }

    let state = Lock<State>(State())
    /// When true, every frame is encoded with ``FrameCodec`` and decoded again on the
    /// other side, so tests exercise the wire form.
    public let encodesFrames: Bool

    /// Makes an empty network.
    public init(encodesFrames: Bool = true) {
        self.encodesFrames = encodesFrames
    }

    func listen(_ transport: LoopbackTransport, at endpoint: Endpoint) throws {
        try state.withLock { state in
            if state.listeners[endpoint] != nil { throw ClusterError.serialization("endpoint \(endpoint) in use") }
            state.listeners[endpoint] = transport
        }
    }

    func listener(at endpoint: Endpoint) -> LoopbackTransport? {
        state.withLock { $0.listeners[endpoint] }
    }

    func isPartitioned(_ x: Endpoint, _ y: Endpoint) -> Bool {
        state.withLock { $0.partitions.contains(Pair(x, y)) }
    }

    /// Drops a closed link from the table (it no longer keeps the network's object graph alive).
    func forget(_ link: LoopbackLink) {
        state.withLock { $0.links.removeAll { $0 === link } }
    }

    func add(_ link: LoopbackLink) {
        state.withLock { $0.links.append(link) }
    }

    /// Crashes the node at `endpoint`: its listener goes away and every link to or from it
    /// closes (both ends are told). Frames in flight on those links are lost.
    public func kill(_ endpoint: Endpoint) {
        let links = state.withLock { state -> [LoopbackLink] in
            state.listeners[endpoint] = nil
            let mine = state.links.filter { $0.localEndpoint == endpoint || $0.remoteEndpoint == endpoint }
            state.links.removeAll { $0.localEndpoint == endpoint || $0.remoteEndpoint == endpoint }
            return mine
        }
        for link in links { link.close() }
    }

    /// Silently drops every frame between `x` and `y` (links stay open) until ``heal(_:_:)``.
    public func partition(_ x: Endpoint, _ y: Endpoint) {
        state.withLock { _ = $0.partitions.insert(Pair(x, y)) }
    }

    /// Ends a ``partition(_:_:)``.
    public func heal(_ x: Endpoint, _ y: Endpoint) {
        state.withLock { _ = $0.partitions.remove(Pair(x, y)) }
    }

    func remove(transport: LoopbackTransport, at endpoint: Endpoint) -> [LoopbackLink] {
        state.withLock { state in
            if state.listeners[endpoint] === transport { state.listeners[endpoint] = nil }
            let mine = state.links.filter { $0.localEndpoint == endpoint || $0.remoteEndpoint == endpoint }
            state.links.removeAll { $0.localEndpoint == endpoint || $0.remoteEndpoint == endpoint }
            return mine
        }
    }
}
