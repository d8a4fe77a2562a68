// ActorSystem+Singleton: one actor per key, created on first use. The singleton table
// maps a key to a SingletonSlot (made under the registry lock, never held while
// spawning); get-or-create runs under the slot's own lock, so racing callers on a key
// spawn once and different keys don't wait. Lock order: slot → registry, never reverse.

import MNScheduler

/// A key's singleton: the current ref (an `ActorRef<M>`), under its own lock.
final class SingletonSlot: Sendable {
    let current = Lock<(any Sendable)?>(nil)
}

extension ActorSystem {
    /// The actor for `key`: spawned by `create` on first use and after it stopped, the
    /// same ref otherwise, e.g.
    /// `try system.singleton(key: "cache") { try system.spawn { Cache() } }`.
    ///
    /// - Thread-safety: racing callers on one key run `create` once and all get its ref;
    ///   keys don't contend. `create` runs under the key's lock: it must not ask for it.
    /// - Stopped: the next call spawns a fresh one; old refs send to dead letters. Leave
    ///   the spawn unnamed, so it never collides with the old actor's name.
    /// - Throws: ``ActorSystemError/singletonTypeMismatch(key:existing:requested:)``, or
    ///   what `create` throws (the key stays empty).
    public func singleton<Message: Sendable>(
        key: String, create: () throws -> ActorRef<Message>
    ) throws -> ActorRef<Message> {
        let slot: SingletonSlot = withSingletons { table in
            if let slot = table[key] as? SingletonSlot { return slot }
            let slot = SingletonSlot()
            table[key] = slot
            return slot
        }
        let result: Result<ActorRef<Message>, any Error> = slot.current.withLock { current in
            if let existing = current {
                guard let ref = existing as? ActorRef<Message> else {
                    return .failure(ActorSystemError.singletonTypeMismatch(key: key, existing: "\(type(of: existing))",
                                                           requested: "\(ActorRef<Message>.self)"))
                }
                if ref.isAcceptingMessages { return .success(ref) }
            }
            do {
                let ref = try create()
                current = ref
                return .success(ref)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension ActorRef {
    /// False once the actor (or every routee) stopped or is stopping. A snapshot.
    var isAcceptingMessages: Bool {
        switch target {
        case .cell(let cell): return !cell.queue.isClosed
        case .sequential(let cell): return !cell.queue.isClosed
        case .router(let router): return router.isAcceptingMessages
        case .promise, .foreign: return true
        }
    }
}
