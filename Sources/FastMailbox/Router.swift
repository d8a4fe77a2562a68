// Router: the recipient behind a pool's ref. No mailbox: it forwards each message on the
// sender's thread to the routee a RoutingStrategy picks, lock-free. Order holds per
// routee only. It watches every routee and stops, freeing the pool's name, after the last.

import MNScheduler
import Synchronization

@usableFromInline
final class Router<Message: Sendable>: AnyActorCell, MessageRecipient, @unchecked Sendable {
    // @unchecked: fields are immutable, atomic, or turn-confined (C1–C3).
    @usableFromInline let strategy: RoutingStrategy
    /// In index order, fixed for the pool's life.
    @usableFromInline let routees: [ActorCellBase<Message>]
    /// The round-robin position. Relaxed.
    @usableFromInline let cursor = Atomic<UInt>(0)
    /// Set once by stop() (release); read by deliver (acquire).
    @usableFromInline let stopped = Atomic<Bool>(false)

    /// Turn-confined.
    private var routeesRunning: Int
    /// Turn-confined.
    private var lastRouteeReason: TerminationReason = .stopped

    init(id: ActorID, name: String, system: ActorSystem, strategy: RoutingStrategy, routees: [ActorCellBase<Message>]) {
        self.strategy = strategy
        self.routees = routees
        self.routeesRunning = routees.count
        // No mailbox: its own queue stays empty and ring-less.
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: .unused)
        advance(.start)  // no preStart: a router has no behaviour of its own
    }

    /// A pool stops once every routee has.
    override func stopImmediately() {}

    /// Before the ref is handed out.
    func watchRoutees() {
        for routee in routees { routee.sendSystem(.watch(self)) }
    }

    // watchableCell: the pool as a whole.
    /// The routees' depths summed (a snapshot).
    override var mailboxDepth: Int { routees.reduce(0) { $0 + $1.mailboxDepth } }
    var isAcceptingMessages: Bool {
        !stopped.load(ordering: .acquiring) && routees.contains { !$0.queue.isClosed }
    }

    /// As a tell to the routee `route()` picks would, else a dead letter. Never inlined.
    @inlinable @inline(never) @discardableResult
    func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        // Borrowed unretained: the sender's ref keeps `routees` alive.
        if let index = route() {
            return Unmanaged.passUnretained(routees[index])._withUnsafeGuaranteedRef { $0.deliver(movingFrom: source) }
        }
        return deadLetter(movingFrom: source)
    }

    /// nil once stopped or every routee's mailbox is closed.
    @inlinable
    func route() -> Int? {
        guard !stopped.load(ordering: .acquiring) else { return nil }
        let position = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        let count = routees.count
        if case .roundRobin = strategy {
            let start = Int(position % UInt(count))  // a pool has at least one routee
            for offset in 0..<count {
                let index = start + offset < count ? start + offset : start + offset - count
                if !routees[index].queue.isClosed { return index }
            }
            return nil
        }
        let routees = self.routees
        return strategy.select(count: count, cursor: position) { index in
            let routee = routees[index]
            return routee.queue.isClosed ? nil : routee.mailboxDepth
        }
    }

    @usableFromInline
    func deadLetter(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        system.publishDeadLetter(MessageEncoding<Message>.take(from: source, boxed: false), recipient: id,
                                 recipientName: name, wasQueued: false)
        return false
    }

    /// Stops every routee with `mode`; the pool terminates after the last.
    override func stop(_ mode: StopMode) {
        stopped.store(true, ordering: .releasing)
        for routee in routees { routee.stop(mode) }
    }

    // MARK: the router's own turn (system messages only)

    override func runTurn(budget: Int, lingering: LingerPermit) -> TurnOutcome {
        guard let systemQueue else { return .idle }
        let outcome = systemQueue.queue.drain(max: budget, taking: { MessageEncoding<SystemMessage>.take(from: $0) }) { message in
            switch message {
            case .terminated(let t):
                routeeTerminated(t)
            case .stop(let mode, _):
                stop(mode)
            case .childFailed, .releaseMailboxRing, .timerFired:
                break  // never sent to a router
            case .watch, .unwatch, .observe:
                handleSystem(message)
            }
        }
        return outcome == .more ? .more : .idle
    }

    private func routeeTerminated(_ t: Terminated) {
        guard !isStopped else { return }
        routeesRunning -= 1
        lastRouteeReason = t.reason
        guard routeesRunning == 0 else { return }
        let reason: TerminationReason = stopped.load(ordering: .acquiring) ? .stopped : lastRouteeReason
        advance(.ended, reason)
    }

    /// The routees are stopping or stopped, so is the pool.
    override func finishAfterShutdown() {
        advance(.shutdown)  // ignored if already stopped
    }
}
