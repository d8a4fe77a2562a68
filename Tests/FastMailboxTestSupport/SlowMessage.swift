import FastMailbox

/// Messages for an actor that works or answers: `get` asks for a reply.
package enum SlowMessage: Sendable {
    case work(Int)
    case get(replyTo: ActorRef<Int>)
}
