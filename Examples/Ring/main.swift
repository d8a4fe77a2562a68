// example-ring — three actors pass one message round a chain for a fixed time
// (the NSThread actors' demo).
//
//   swift run example-ring [seconds]     (default 1; add `-c release` for optimised numbers)
//
// Three event actors A → B → C → A. One `Token` object travels round the ring: each
// actor counts it and tells it to the next, until the deadline the token carries has
// passed; the actor that notices replies to the `ask` that started the round with the
// number of hops. The token is a class, so a hop costs no allocation (the mailbox slot
// holds the reference), and the three actors never need more than one worker at a time.

import FastMailbox
import Synchronization

/// The one message of this program. Sendable without locks: `ring`, `deadline` and
/// `replyTo` never change, and `hops` is atomic (only one actor holds the token at a
/// time anyway, so the increments never contend).
final class Token: Sendable {
    let ring: [ActorRef<Token>]
    let deadline: ContinuousClock.Instant
    let replyTo: ActorRef<Int>
    let hops = Atomic<Int>(0)

    init(ring: [ActorRef<Token>], deadline: ContinuousClock.Instant, replyTo: ActorRef<Int>) {
        self.ring = ring
        self.deadline = deadline
        self.replyTo = replyTo
    }
}

/// One member of the ring: position `index` passes to `index + 1`.
final class RingNode: EventActor {
    let index: Int
    private var received = 0

    init(index: Int) { self.index = index }

    func receive(_ token: Token, context: ActorContext<Token>) {
        received += 1
        let hops = token.hops.wrappingAdd(1, ordering: .relaxed).newValue
        if ContinuousClock.now < token.deadline {
            token.ring[(index + 1) % token.ring.count].tell(token)
        } else {
            token.replyTo.tell(hops)   // the round is over: answer the ask
        }
    }

    func postStop(context: ActorContext<Token>) {
        print("  [\(context.name)] received the token \(received) times")
    }
}

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1
let system = try ActorSystem(name: "ring")
print("example-ring: 3 actors, 1 token, \(seconds) s, \(system.scheduler.workerCount) workers")

let ring = try ["A", "B", "C"].enumerated().map { index, name in
    try system.spawn(options: SpawnOptions(name: name)) { RingNode(index: index) }
}

let clock = ContinuousClock()
let start = clock.now
let hops: Int = try await ring[0].ask(timeout: .seconds(seconds + 10)) { replyTo in
    Token(ring: ring, deadline: start + .seconds(seconds), replyTo: replyTo)
}
let elapsed = clock.now - start
let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let perSecond = Int((Double(hops) / elapsedSeconds).rounded())
let nanosPerHop = Int((elapsedSeconds * 1e9 / Double(hops)).rounded())
print("  \(hops) hops in \(elapsed): \(perSecond) hops/s, \(nanosPerHop) ns per hop")
#if DEBUG
print("  (a debug build: for representative figures run `swift run -c release example-ring`)")
#endif

let report = system.shutdown()
print("example-ring: shutdown: \(report)")
print("  (delivered = the \(hops) hops; nothing dead-lettered or left)")
