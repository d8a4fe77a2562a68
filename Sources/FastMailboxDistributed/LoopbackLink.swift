// LoopbackLink — one end of an in-memory link (LoopbackNetwork).
//
// Invariants:
//  (L1) Each end owns a serial Dispatch queue; every call into its delegate (linkOpened,
//       received, linkClosed) runs on that queue, so the delegate sees them one at a
//       time and in order (the ClusterTransport contract).
//  (L2) `send` on end A enqueues delivery on end B's queue: frames one thread sends
//       arrive in that order. A frame is handed over only while both ends are open.
//      Both queues start inactive: the dialler queues linkOpened on both ends, then
//      activates them, so a hello sent from one end's linkOpened cannot reach the other
//      end before its own linkOpened.
//  (L3) `close` flips `open` on both ends once (atomic exchange) and enqueues exactly one
//       linkClosed per end, after everything already queued there.

import Dispatch
import Synchronization

final class LoopbackLink: ClusterLink, @unchecked Sendable {
    // @unchecked: `peer` is set once, before the link is handed to any delegate (the
    // queues' enqueue orders it), and never changed; everything else is immutable or atomic.
    let network: LoopbackNetwork
    let localEndpoint: Endpoint
    let remoteEndpoint: Endpoint
    let queue: DispatchQueue
    weak var delegate: (any ClusterTransportDelegate)?
    /// The other end (weak: the two ends must not keep each other alive; each is held by
    /// its delegate's table while open).
    nonisolated(unsafe) weak var peer: LoopbackLink?
    let open = Atomic<Bool>(true)

    init(network: LoopbackNetwork, local: Endpoint, remote: Endpoint, delegate: any ClusterTransportDelegate) {
        self.network = network
        self.localEndpoint = local
        self.remoteEndpoint = remote
        self.delegate = delegate
        // Inactive until both ends have their linkOpened queued (LoopbackTransport.dial),
        // so no frame can overtake the other end's linkOpened.
        self.queue = DispatchQueue(label: "loopback \(local)←\(remote)", attributes: .initiallyInactive)
    }

    var remoteDescription: String { "loopback \(remoteEndpoint)" }

    func send(_ frame: Frame) -> Bool {
        guard open.load(ordering: .acquiring), let peer else { return false }
        if network.isPartitioned(localEndpoint, remoteEndpoint) { return true }  // N3: dropped
        var carried = frame
        if network.encodesFrames {
            do { carried = try FrameCodec.decode(FrameCodec.encode(frame)) } catch {
                preconditionFailure("LoopbackLink: a frame did not survive encoding: \(error)")
            }
        }
        let delivered = carried
        peer.queue.async {
            guard peer.open.load(ordering: .acquiring), let delegate = peer.delegate else { return }
            delegate.received(delivered, on: peer)
        }
        return true
    }

    func close() {
        let other = peer
        closeEnd()
        other?.closeEnd()
        network.forget(self)
        if let other { network.forget(other) }
    }

    private func closeEnd() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in delegate?.linkClosed(self) }
    }
}
