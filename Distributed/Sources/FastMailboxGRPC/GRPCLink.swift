// GRPCLink — one end of a cluster link carried by one bidirectional gRPC stream.
//
// Invariants:
//  (G1) Frames are encoded on the sending thread and yielded, in order, into `outbound`
//       (an unbounded AsyncStream); one writer task drains it into the RPC: frames one
//       thread sends go out in that order. `send` never blocks and never calls the delegate.
//  (G2) `close` finishes `outbound` and cancels the RPC (`cancel`); the RPC's task then
//       ends and reports linkClosed — exactly once per link (`closedReported`), after the
//       reading loop's last `received`.
//  (G3) `open` is false from the first `close` on: later sends return false.

import FastMailboxDistributed
import Foundation
import Synchronization

final class GRPCLink: ClusterLink, @unchecked Sendable {
    // @unchecked: `cancel` is set once by the owner before the link is reported opened
    // (the report orders it); everything else is immutable or atomic.
    let outbound: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let open = Atomic<Bool>(true)
    private let closedReported = Atomic<Bool>(false)
    let remoteDescription: String
    nonisolated(unsafe) var cancel: (@Sendable () -> Void)?

    init(remoteDescription: String) {
        self.remoteDescription = remoteDescription
        (outbound, continuation) = AsyncStream<[UInt8]>.makeStream()
    }

    func send(_ frame: Frame) -> Bool {
        guard open.load(ordering: .acquiring) else { return false }
        guard let bytes = try? FrameCodec.encode(frame) else { return false }
        if case .terminated = continuation.yield([UInt8](bytes)) { return false }
        return true
    }

    func close() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        continuation.finish()
        cancel?()
    }

    /// Reports linkClosed once (G2).
    func reportClosed(to delegate: any ClusterTransportDelegate) {
        close()
        if !closedReported.exchange(true, ordering: .acquiringAndReleasing) { delegate.linkClosed(self) }
    }
}
