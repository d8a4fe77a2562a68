// Router — the recipient behind a pool's ref: no mailbox of its own, it forwards each
// message to one routee, chosen by a RoutingStrategy, on the sender's thread.
//
// Concurrency: every field is immutable except `cursor` (relaxed atomic increment: it only
// spreads work, it orders nothing) and `stopped` (set once by stop(), release; read by
// deliver, acquire). A routee's depth and closed bit are single atomic loads of its
// MPSCQueue state word. So deliver is lock-free: one increment, up to n loads, and the
// routee's own enqueue.
// Ordering: a message is one tell to one routee, so per-sender FIFO holds per routee only:
// two messages from one sender that go to different routees may be processed in any order.

import MNScheduler
import Synchronization

final class Router<Message: Sendable>: MessageRecipient, RouterSystemProviding, Sendable {
    let id: ActorID
    let name: String
    let system: ActorSystem
    let strategy: RoutingStrategy
    /// The routees, in index order (fixed for the pool's life).
    let routees: [ActorCellBase<Message>]
    /// Messages routed so far (the round-robin position). Any thread, relaxed.
    private let cursor = Atomic<UInt>(0)
    /// Set once by stop() (release); deliver reads it (acquire).
    private let stopped = Atomic<Bool>(false)

    init(id: ActorID, name: String, system: ActorSystem, strategy: RoutingStrategy, routees: [ActorCellBase<Message>]) {
        self.id = id
        self.name = name
        self.system = system
        self.strategy = strategy
        self.routees = routees
    }

    var routerSystem: ActorSystem { system }
    /// A pool cannot be watched as a whole (watch its routees, see `ActorSystem.routees(of:)`).
    var watchableCell: AnyActorCell? { nil }
    /// The sum of the routees' depths (a snapshot).
    var mailboxDepth: Int { routees.reduce(0) { $0 + $1.mailboxDepth } }
    /// False once the pool was stopped or every routee has.
    var isAcceptingMessages: Bool {
        !stopped.load(ordering: .acquiring) && routees.contains { !$0.mailbox.isClosed }
    }

    @discardableResult
    func deliver(_ message: Message) -> Bool {
        if !stopped.load(ordering: .acquiring) {
            let position = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
            let routees = self.routees
            let chosen = strategy.select(count: routees.count, cursor: position) { index in
                let routee = routees[index]
                return routee.mailbox.isClosed ? nil : routee.mailboxDepth
            }
            if let chosen { return routees[chosen].deliver(message) }
        }
        system.publishDeadLetter(message, recipient: id, recipientName: name, wasQueued: false)
        return false
    }

    /// Stops every routee with `mode`; later messages to the pool go to dead letters.
    func stop(_ mode: StopMode) {
        stopped.store(true, ordering: .releasing)
        for routee in routees { routee.stop(mode) }
    }
}
