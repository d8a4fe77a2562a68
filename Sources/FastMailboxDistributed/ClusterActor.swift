import Distributed

/// A distributed actor of a ``ClusterSystem`` that runs, when local, on its own
/// `MNSerialExecutor` of the node's scheduler.
///
/// ```swift
/// distributed actor Counter: ClusterActor {
///     var total = 0
///     distributed func add(_ n: Int) -> Int { total += n; return total }
/// }
/// ```
///
/// The executor is looked up through the actor system by id (``ClusterSystem/executor(for:)``)
/// on each hop, never stored in the actor: a remote proxy has no initialised storage.
public protocol ClusterActor: DistributedActor where ActorSystem == ClusterSystem {}

extension ClusterActor {
    /// The actor's MNSerialExecutor on the node's scheduler.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        actorSystem.executor(for: id)
    }
}
