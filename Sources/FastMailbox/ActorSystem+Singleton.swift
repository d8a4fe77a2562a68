// ActorSystem+Singleton — one actor per key, created on first use.
//
// Algorithm: the registry's singleton table maps a key to a SingletonSlot, created (empty)
// under the registry lock the first time the key is asked for; that lock is never held
// while spawning. The slot has its own lock, and get-or-create runs entirely under it:
// return the stored ref if its actor still accepts messages, else spawn (which takes the
// registry lock inside) and store the new ref. Racing callers on one key serialise on the
// slot, so exactly one spawn happens and every caller gets its ref; callers on different
// keys don't wait for each other. Lock order: slot → registry, never the reverse (the
// registry lock is released before a slot lock is taken), so no deadlock.

import MNScheduler

/// A key's singleton: the current ref (an `ActorRef<M>`), under its own lock.
final class SingletonSlot: Sendable {
    let current = Lock<(any Sendable)?>(nil)
}

extension ActorSystem {
    /// The actor for `key`: spawned by `create` on first use and again after it stopped,
    /// the same ref otherwise. `create` is any spawn, e.g.
    /// `try system.singleton(key: "cache") { try system.spawn { Cache() } }`.
    ///
    /// - Thread-safety: any number of threads and tasks may race on one key: `create` runs
    ///   once and all of them get its ref (later callers wait for the spawn, which does not
    ///   block). Different keys don't contend. `create` runs under the key's lock: it must
    ///   not ask for the same key.
    /// - Stopped: if the singleton has stopped (or is stopping), the next call spawns a
    ///   fresh one and returns its ref; refs to the old one keep sending to dead letters.
    ///   Leave the spawn unnamed (a generated name), so a recreation never collides with
    ///   the old actor's name while it drains.
    /// - Throws: ``ActorSystemError/singletonTypeMismatch(key:existing:requested:)`` when the
    ///   key already holds a ref of another message type; whatever `create` throws
    ///   (the key stays empty then).
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
    /// False once the actor (or every routee of a pool) has stopped or is stopping: its
    /// mailbox is closed. A snapshot; any thread.
    var isAcceptingMessages: Bool {
        switch target {
        case .cell(let cell): return !cell.isClosed
        case .sequential(let cell): return !cell.isClosed
        case .router(let router): return router.isAcceptingMessages
        case .promise, .foreign: return true
        }
    }
}
