// Router: the recipient behind a pool's ref: no mailbox, it forwards each message on the
// sender's thread to the routee a RoutingStrategy picks. Lock-free: fields are immutable
// but `cursor` (relaxed: it only spreads work) and `stopped` (release/acquire). Order
// holds per routee only. Registered under the pool's name, not a live actor; it watches
// every routee and stops, freeing the name, when the last one has terminated.

import MNScheduler
import Synchronization

@usableFromInline
final class Router<Message: Sendable>: AnyActorCell, MessageRecipient, @unchecked Sendable {
    // @unchecked: fields are immutable, atomic, or turn-confined (AnyActorCell C1–C3).
    @usableFromInline let strategy: RoutingStrategy
    /// The routees, in index order, fixed for the pool's life.
    @usableFromInline let routees: [ActorCellBase<Message>]
    /// Messages routed so far (the round-robin position). Relaxed.
    @usableFromInline let cursor = Atomic<UInt>(0)
    /// Set once by stop() (release); read by deliver (acquire).
    @usableFromInline let stopped = Atomic<Bool>(false)

    /// Routees not yet reported terminated. Turn-confined.
    private var routeesRunning: Int
    /// Why the last routee stopped. Turn-confined.
    private var lastRouteeReason: TerminationReason = .stopped

    init(id: ActorID, name: String, system: ActorSystem, strategy: RoutingStrategy, routees: [ActorCellBase<Message>]) {
        self.strategy = strategy
        self.routees = routees
        self.routeesRunning = routees.count
        // A router has no mailbox: its own queue stays empty and ring-less.
        super.init(id: id, name: name, system: system, parent: nil, supervisor: system.defaultSupervisor,
                   mailbox: .unused)
        advance(.start)  // no preStart: a router has no behaviour of its own
    }

    /// Shutdown's stragglers: a pool stops once every routee has.
    override func stopImmediately() {}

    /// Starts watching the routees, before the ref is handed out.
    func watchRoutees() {
        for routee in routees { routee.sendSystem(.watch(self)) }
    }

    // watchableCell: the pool as a whole, which terminates once every routee has.
    /// The sum of the routees' depths (a snapshot).
    override var mailboxDepth: Int { routees.reduce(0) { $0 + $1.mailboxDepth } }
    /// False once the pool was stopped or every routee has.
    var isAcceptingMessages: Bool {
        !stopped.load(ordering: .acquiring) && routees.contains { !$0.isClosed }
    }

    /// Hands the message to the routee `route()` picks, as a tell would, else dead-letters
    /// it. Inlinable (specialised with the sender's `tell`), never inlined.
    @inlinable @inline(never) @discardableResult
    func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        // Borrowed unretained: the sender's ref keeps `routees` alive.
        if let index = route() {
            return Unmanaged.passUnretained(routees[index])._withUnsafeGuaranteedRef { $0.deliver(movingFrom: source) }
        }
        return deadLetter(movingFrom: source)
    }

    /// The next routee; nil once stopped or every routee's mailbox is closed.
    @inlinable
    func route() -> Int? {
        guard !stopped.load(ordering: .acquiring) else { return nil }
        let position = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        let count = routees.count
        if case .roundRobin = strategy {
            let start = Int(position % UInt(count))  // a pool has at least one routee
            for offset in 0..<count {
                let index = start + offset < count ? start + offset : start + offset - count
                if !routees[index].isClosed { return index }
            }
            return nil
        }
        let routees = self.routees
        return strategy.select(count: count, cursor: position) { index in
            let routee = routees[index]
            return routee.isClosed ? nil : routee.mailboxDepth
        }
    }

    /// No routee takes it: the message at `source` becomes a dead letter.
    @usableFromInline
    func deadLetter(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        system.publishDeadLetter(MessageEncoding<Message>.take(from: source, boxed: false), recipient: id,
                                 recipientName: name, wasQueued: false)
        return false
    }

    /// Stops every routee with `mode`; later messages go to dead letters. The pool
    /// terminates (`.stopped`) when the last routee has.
    override func stop(_ mode: StopMode) {
        stopped.store(true, ordering: .releasing)
        for routee in routees { routee.stop(mode) }
    }

    // MARK: the router's own turn (system messages only)

    override func runTurn(budget: Int) -> TurnOutcome {
        guard let systemQueue else { return .idle }
        let outcome = systemQueue.drain(max: budget, taking: { MessageEncoding<SystemMessage>.take(from: $0) }) { message in
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

    /// After the scheduler shut down: the routees are stopping or stopped, so is the pool.
    override func finishAfterShutdown() {
        advance(.shutdown)  // ignored if already stopped
    }
}
