import FastMailbox

enum CounterMessage: Sendable { case add(Int), get(replyTo: ActorRef<Int>) }

final class Counter: EventActor {
    var total = 0   // one message at a time: no locks
    func receive(_ message: CounterMessage, context: ActorContext<CounterMessage>) {
        switch message {
        case .add(let n): total += n
        case .get(let replyTo): replyTo.tell(total)
        }
    }
}

let system = try ActorSystem()
let counter = try system.spawn(options: .named("counter")) { Counter() }
for n in 1...100 { counter.tell(.add(n)) }                 // fire-and-forget, in order
let total = try await counter.ask { .get(replyTo: $0) }    // request–reply
print("total: \(total)")                                   // total: 5050
print(system.shutdown())                                   // delivered 101, dead-lettered 0, left 0 in 0 actors
