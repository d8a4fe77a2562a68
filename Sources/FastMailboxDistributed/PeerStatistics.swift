/// What this node sent to and received from one peer (a snapshot, across links).
///
/// The books of tells balance: `tellsSent == tellsAcknowledged + tellsInDoubt +
/// tellsUnacknowledged` at every moment (``isBalanced``), and refused tells are counted
/// apart (they were dead-lettered here without being sent).
public struct PeerStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Tells handed to a link.
    public var tellsSent: Int = 0
    /// Tells the peer acknowledged (delivered to a mailbox there, or dead-lettered there).
    public var tellsAcknowledged: Int = 0
    /// Tells still waiting for an acknowledgement on the live link.
    public var tellsUnacknowledged: Int = 0
    /// Tells whose link closed before they were acknowledged: dead-lettered here; they may
    /// or may not have reached the peer (at most once across a reconnect).
    public var tellsInDoubt: Int = 0
    /// Tells refused because the peer was down or not connected: dead-lettered here.
    public var tellsRefused: Int = 0
    /// Calls sent.
    public var callsSent: Int = 0
    /// Calls that returned a value (or `Void`).
    public var callsSucceeded: Int = 0
    /// Calls that failed (remote error, unknown actor, timeout, link lost, node down).
    public var callsFailed: Int = 0
    /// Frame payload bytes sent (arguments, results, messages).
    public var bytesSent: Int = 0
    /// Frame payload bytes received.
    public var bytesReceived: Int = 0

    /// `tellsSent == tellsAcknowledged + tellsInDoubt + tellsUnacknowledged`.
    public var isBalanced: Bool { tellsSent == tellsAcknowledged + tellsInDoubt + tellsUnacknowledged }

    public var description: String {
        "tells sent \(tellsSent) (acknowledged \(tellsAcknowledged), in doubt \(tellsInDoubt), unacknowledged \(tellsUnacknowledged)), refused \(tellsRefused); calls sent \(callsSent) (ok \(callsSucceeded), failed \(callsFailed)); bytes out \(bytesSent), in \(bytesReceived)"
    }
}
