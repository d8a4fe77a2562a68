// Ask — request–reply on top of tell.
//
// `ref.ask { replyTo in .get(replyTo: replyTo) }` creates an AskPromise: a one-shot
// recipient with a unique request id, wrapped in an ActorRef<Reply> that the message
// carries. The first of {reply, timeout, refusal} wins a CAS on the promise's state and
// resumes the caller's continuation; anything that loses (a reply after the timeout, a
// second reply) goes to dead letters with the request id. Nothing crashes, nothing is
// silently dropped.
//
// Memory ordering: the continuation is stored before the request is sent (the send's
// ring release, and Dispatch's timer submission, order it before any reader); the CAS
// (acq_rel) makes the winner the only thread that touches it afterwards.

import Dispatch
import MNScheduler
import Synchronization

/// Why an `ask` failed.
public enum AskError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No reply within the timeout. A reply that arrives later goes to dead letters.
    case timedOut(requestID: UInt64, recipient: String, after: Duration)
    /// The recipient had stopped; the request went to dead letters.
    case recipientStopped(requestID: UInt64, recipient: String)

    public var description: String {
        switch self {
        case .timedOut(let id, let recipient, let after):
            return "ask #\(id) to \(recipient) timed out after \(after)"
        case .recipientStopped(let id, let recipient):
            return "ask #\(id) to \(recipient) failed: the actor has stopped"
        }
    }
}

/// Request ids, unique in the process.
private let askRequestIDs = Atomic<UInt64>(0)

final class AskPromise<Reply: Sendable>: MessageRecipient, @unchecked Sendable {
    // @unchecked: `continuation` is written once before publication and afterwards only
    // by the CAS winner (see file comment).
    static var pending: UInt8 { 0 }
    static var replied: UInt8 { 1 }
    static var failed: UInt8 { 2 }

    let id: ActorID
    let requestID: UInt64
    let system: ActorSystem
    let state = Atomic<UInt8>(0)
    var continuation: CheckedContinuation<Reply, any Error>?

    init(system: ActorSystem) {
        self.system = system
        self.id = system.nextActorID()
        self.requestID = askRequestIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }


    var name: String { "ask#\(requestID)" }
    var watchableCell: AnyActorCell? { nil }
    var mailboxDepth: Int { 0 }
    func stop(_ mode: StopMode) {}

    @discardableResult
    func deliver(_ reply: Reply) -> Bool {
        let (won, observed) = state.compareExchange(expected: Self.pending, desired: Self.replied,
                                                    ordering: .acquiringAndReleasing)
        if won, let continuation {
            self.continuation = nil
            threadSanitizerRelease(self)  // what the replier wrote happens-before the asker's next line
            continuation.resume(returning: reply)
            return true
        }
        system.deadLetters.publish(DeadLetter(
            message: reply, recipient: id, recipientName: name,
            reason: observed == Self.failed ? .askTimedOut(requestID: requestID) : .duplicateReply(requestID: requestID)))
        return false
    }

    func fail(_ error: AskError) {
        if state.compareExchange(expected: Self.pending, desired: Self.failed, ordering: .acquiringAndReleasing).exchanged,
           let continuation {
            self.continuation = nil
            continuation.resume(throwing: error)
        }
    }
}

extension ActorRef {
    /// Sends the message built by `makeMessage` — which gets a one-shot reply-to ref with a
    /// unique request id — and awaits the reply.
    ///
    /// - Throws: ``AskError/timedOut(requestID:recipient:after:)`` when no reply came within
    ///   `timeout` (a late reply goes to dead letters), or
    ///   ``AskError/recipientStopped(requestID:recipient:)`` when the actor had stopped.
    /// - Ordering: the request is an ordinary tell, ordered after this sender's earlier ones.
    /// - Isolation: runs in the caller's isolation (`#isolation`), so it can be called from
    ///   `@MainActor` code or a native actor with a closure that captures their state.
    public func ask<Reply: Sendable>(
        timeout: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        guard let system = (recipient as? AnyActorCell)?.system ?? (recipient as? RouterSystemProviding)?.routerSystem else {
            preconditionFailure("ask on a ref without an actor system")
        }
        let promise = AskPromise<Reply>(system: system)
        let target = name
        defer { threadSanitizerAcquire(promise) }
        return try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
            promise.continuation = continuation
            let message = makeMessage(ActorRef<Reply>(promise))
            guard recipient.deliver(message) else {
                promise.fail(.recipientStopped(requestID: promise.requestID, recipient: target))
                return
            }
            let (seconds, attos) = timeout.components
            let nanos = Int(clamping: seconds * 1_000_000_000 + attos / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
                promise.fail(.timedOut(requestID: promise.requestID, recipient: target, after: timeout))
            }
        }
    }
}

/// Recipients that are not cells but belong to a system (routers) expose it for `ask`.
protocol RouterSystemProviding {
    var routerSystem: ActorSystem { get }
}
