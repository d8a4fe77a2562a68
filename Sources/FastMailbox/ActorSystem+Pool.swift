// ActorSystem+Pool: N actors of one behaviour behind one ref (see Router).

import MNScheduler

extension ActorSystem {
    /// A pool: `size` routees made by `spawnRoutee` (the caller's specialised spawn) behind
    /// a router registered under `name`. Nothing is left running when it throws.
    func spawnPool<Message: Sendable>(
        name: String?, size: Int, routing: RoutingStrategy,
        spawnRoutee: (String) throws(ActorSystemError) -> ActorRef<Message>
    ) throws(ActorSystemError) -> ActorRef<Message> {
        guard size >= 1 else { throw .invalidPoolSize(size) }
        let id = nextActorID()
        let poolName = name ?? "$pool\(id.rawValue)"
        if let name { try reserveName(name) }
        var routees: [ActorCellBase<Message>] = []
        routees.reserveCapacity(size)
        do {
            for index in 0..<size {
                let ref = try spawnRoutee("\(poolName)/\(index)")
                guard case .cell(let cell) = ref.target else {
                    preconditionFailure("a pool's routee is not an actor cell")
                }
                routees.append(cell)
            }
        } catch {
            for routee in routees { routee.stop(.immediately) }
            if let name { unreserveName(name) }
            if case .duplicateName = error { throw .duplicateName(poolName) }
            throw error
        }
        let router = Router(id: id, name: poolName, system: self, strategy: routing, routees: routees)
        if let name { fillReservedName(name, with: router) }
        router.watchRoutees()
        return ActorRef(router)
    }

    /// The routees of a pool, in index order (fixed; stopped ones stay); nil for another ref.
    public func routees<Message>(of pool: ActorRef<Message>) -> [ActorRef<Message>]? {
        guard case .router(let router) = pool.target else { return nil }
        return router.routees.map { ActorRef($0) }
    }
}
