import FastMailbox

/// A cached remote ref: its watch proxy, told when the remote node goes down.
protocol RemoteRefEntry: Sendable {
    /// The remote actor's node went down: the proxy stops, so watchers get `Terminated`.
    func nodeDown(_ reason: String)
}

/// The cache entry of an `ActorRef<Message>` to a remote actor.
struct TypedRemoteRefEntry<Message: Codable & Sendable>: RemoteRefEntry {
    let ref: ActorRef<Message>
    let proxy: ActorRef<RemoteWatchProxy.Message>

    func nodeDown(_ reason: String) { proxy.tell(.nodeDown(reason)) }
}
