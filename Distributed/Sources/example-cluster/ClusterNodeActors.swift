import Distributed
import FastMailbox
import FastMailboxDistributed
import Synchronization

/// What one node received, per sender node: tells (to the exported sink) and calls (to
/// the distributed counter), each with the sender's sequence numbers.
final class Tally: Sendable {
    struct PerSender: Codable, Sendable {
        var tells = 0
        var calls = 0
        var reorders = 0
        var lastTell = -1
        var lastCall = -1
    }
    private let bySender = Mutex<[Int: PerSender]>([:])

    func tell(from sender: Int, sequence: Int) {
        bySender.withLock { table in
            var entry = table[sender] ?? PerSender()
            if sequence != entry.lastTell + 1 { entry.reorders += 1 }
            entry.lastTell = sequence
            entry.tells += 1
            table[sender] = entry
        }
    }

    func call(from sender: Int, sequence: Int) {
        bySender.withLock { table in
            var entry = table[sender] ?? PerSender()
            if sequence != entry.lastCall + 1 { entry.reorders += 1 }
            entry.lastCall = sequence
            entry.calls += 1
            table[sender] = entry
        }
    }

    func report(for sender: Int) -> PerSender { bySender.withLock { $0[sender] ?? PerSender() } }
}

/// The message other nodes tell this node's sink (an event actor, not a distributed actor).
struct Ping: Codable, Sendable {
    var from: Int
    var sequence: Int
}

/// The exported event actor: counts tells per sender and checks their order.
final class Sink: EventActor {
    let tally: Tally
    init(tally: Tally) { self.tally = tally }
    func receive(_ message: Ping, context: ActorContext<Ping>) {
        tally.tell(from: message.from, sequence: message.sequence)
    }
}

/// The distributed actor other nodes call.
distributed actor NodeCounter: ClusterActor {
    let tally: Tally

    init(tally: Tally, actorSystem: ClusterSystem) {
        self.tally = tally
        self.actorSystem = actorSystem
    }

    distributed func record(from sender: Int, sequence: Int) {
        tally.call(from: sender, sequence: sequence)
    }

    /// What this node received from `sender` so far. Called after the sender's tells on
    /// the same link, so it counts all of them (per-link FIFO).
    distributed func report(from sender: Int) -> Tally.PerSender {
        tally.report(for: sender)
    }
}
