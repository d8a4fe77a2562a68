// ActorSystem+Pool — N actors of one behaviour behind one ref (see Router, RoutingStrategy).

import MNScheduler

extension ActorSystem {
    /// Spawns a pool: `size` event actors made by `factory`, behind one ref whose messages
    /// are routed to one routee each by `routing`.
    ///
    /// The pool is registered under `name` like any actor (``lookup(_:as:)`` finds the pool
    /// ref; the name is freed when the pool terminates). Routees are top-level actors named
    /// `"<name>/<index>"` (also findable), each with its own mailbox and supervised by
    /// `supervisor` (else the system default); a routee that stops for good is skipped by
    /// the router. ``ActorSystemStatistics/liveActors`` counts the routees, not the pool.
    ///
    /// - Thread-safety: the pool ref may be used from any thread or task; routing is
    ///   lock-free (see ``RoutingStrategy``). `ask` through the pool works: the routee that
    ///   gets the request replies.
    /// - Ordering: per-sender order holds **per routee only**: two messages from one
    ///   sender that go to different routees may be processed in either order.
    /// - Stopping: `poolRef.stop(mode)` stops every routee with `mode`; later messages to
    ///   the pool go to dead letters. `mailboxDepth` is the sum of the routees' depths.
    ///   The pool ref can be watched (``ActorContext/watch(_:)``, ``ActorRef/terminated``):
    ///   the pool terminates when its last routee has — with `.stopped` after
    ///   `poolRef.stop`, `.systemShutDown` at shutdown, else the last routee's reason.
    /// - Throws: ``ActorSystemError/invalidPoolSize(_:)`` when `size < 1`,
    ///   ``ActorSystemError/duplicateName(_:)`` when the pool's name (or a routee's) is
    ///   taken, or the errors of ``spawn(name:mailboxCapacity:boundedMailbox:supervisor:_:)``. Nothing is
    ///   left running when it throws.
    @inlinable @discardableResult
    public func spawnPool<A: EventActor>(
        name: String? = nil, size: Int, routing: RoutingStrategy = .roundRobin,
        mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil, _ factory: @escaping @Sendable () -> A
    ) throws(ActorSystemError) -> ActorRef<A.Message> {
        // Inlinable so the routees' turns are specialised for A here, as `spawn`'s are
        // (ActorCellBase, "Specialised turns").
        try spawnPool(name: name, size: size, routing: routing) { (routeeName) throws(ActorSystemError) in
            try spawnCell(name: routeeName, mailboxCapacity: mailboxCapacity, parent: nil, supervisor: supervisor,
                          mailboxPass: ActorCell<A>.specializedMailboxPass, factory: factory)
        }
    }

    /// `spawnPool` with the routees made by `spawnRoutee` (given each routee's name), in the
    /// caller's specialised code: an event actor's cell, or a closure actor's.
    @usableFromInline
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

    /// Spawns a pool of `size` actors whose behaviour is a closure (see
    /// ``spawnPool(name:size:routing:mailboxCapacity:supervisor:_:)``).
    @inlinable @discardableResult
    public func spawnPool<Message: Sendable>(
        name: String? = nil, size: Int, routing: RoutingStrategy = .roundRobin,
        mailboxCapacity: Int = ActorSystem.defaultMailboxCapacity,
        supervisor: SupervisorStrategy? = nil,
        receive: @escaping @Sendable (Message, ActorContext<Message>) throws -> Void
    ) throws(ActorSystemError) -> ActorRef<Message> {
        // Each routee a closure actor's cell, holding the closure itself (ClosureActorCell).
        try spawnPool(name: name, size: size, routing: routing) { (routeeName) throws(ActorSystemError) in
            try spawnClosureCell(name: routeeName, mailboxCapacity: mailboxCapacity, boundedMailbox: false,
                                 parent: nil, supervisor: supervisor, receive: receive)
        }
    }

    /// The routees of a pool, in index order; nil when `pool` is not a pool's ref.
    /// Thread-safe; the list is fixed for the pool's life (stopped routees stay in it).
    public func routees<Message>(of pool: ActorRef<Message>) -> [ActorRef<Message>]? {
        guard case .router(let router) = pool.target else { return nil }
        return router.routees.map { ActorRef($0) }
    }
}
