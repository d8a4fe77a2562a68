import Dispatch

/// A ``ClusterTransport`` over a ``LoopbackNetwork``: nodes in one process, for tests and
/// demos. Keeps the whole transport contract (ordered links, one linkClosed per link).
///
/// Thread-safety: every method may be called from any thread.
public final class LoopbackTransport: ClusterTransport, @unchecked Sendable {
    // @unchecked: `endpoint` and `delegate` are written once by `start` under the
    // network's lock-protected listener registration, before any dial can find them.
    private let network: LoopbackNetwork
    nonisolated(unsafe) private var endpoint: Endpoint?
    nonisolated(unsafe) private weak var delegate: (any ClusterTransportDelegate)?

    /// A transport on `network`.
    public init(network: LoopbackNetwork) {
        self.network = network
    }

    public func start(at endpoint: Endpoint, delegate: any ClusterTransportDelegate) async throws {
        self.endpoint = endpoint
        self.delegate = delegate
        try network.listen(self, at: endpoint)
    }

    public func dial(_ remote: Endpoint) {
        guard let endpoint, let delegate, let acceptor = network.listener(at: remote),
              let acceptorDelegate = acceptor.delegate else { return }
        let near = LoopbackLink(network: network, local: endpoint, remote: remote, delegate: delegate)
        let far = LoopbackLink(network: network, local: remote, remote: endpoint, delegate: acceptorDelegate)
        near.peer = far
        far.peer = near
        network.add(near)
        network.add(far)
        far.queue.async { acceptorDelegate.linkOpened(far, dialled: nil) }
        near.queue.async { delegate.linkOpened(near, dialled: remote) }
        far.queue.activate()
        near.queue.activate()
    }

    public func shutdown() async {
        guard let endpoint else { return }
        for link in network.remove(transport: self, at: endpoint) { link.close() }
    }
}
