import FastMailbox
import Foundation

/// A local `ActorRef` other nodes can tell: decodes a payload and tells it.
struct ExportedActor: Sendable {
    enum Outcome { case delivered, deadLettered, undecodable(String) }

    /// Decodes the payload and tells the actor (the core dead-letters it if stopped).
    let deliver: @Sendable (Data, ClusterSystem) -> Outcome
    /// If the ref is an ask's reply slot, fails that ask (`recipientStopped`).
    let failPendingAsk: @Sendable () -> Void
    /// True when nothing can ever be accepted through it again (an ended ask's slot).
    let isFinished: @Sendable () -> Bool
    /// Removed after its first delivery (an ask's reply slot).
    let isOneShot: Bool
    /// The ref's local ActorID (for dead letters about it).
    let deadLetterID: FastMailbox.ActorID
    /// The exported ref itself (an `ActorRef<Message>`), for decoding refs to this node.
    let ref: any Sendable

    init<Message: Codable & Sendable>(_ ref: ActorRef<Message>, oneShot: Bool) {
        deliver = { payload, system in
            let message: Message
            do { message = try system.makeDecoder().decode(Message.self, from: payload) } catch {
                return .undecodable("\(Message.self): \(error)")
            }
            return ref.deliverReportingAcceptance(message) ? .delivered : .deadLettered
        }
        failPendingAsk = { ref.failPendingAsk() }
        isFinished = { ref.isFinishedAskReplySlot }
        isOneShot = oneShot
        deadLetterID = ref.id
        self.ref = ref
    }
}
