// Ask — request–reply on top of tell.
//
// `ref.ask { replyTo in .get(replyTo: replyTo) }` creates an AskPromise: a one-shot
// recipient with a unique request id, wrapped in an ActorRef<Reply> that the message
// carries. The first of {reply, timeout, refusal} wins a CAS on the promise's state and
// resumes the caller's continuation; anything that loses (a reply after the timeout, a
// second reply) goes to dead letters with the request id. Nothing crashes, nothing is
// silently dropped.
//
// The request itself dead-lettered (the actor stopped before handling it) fails the ask
// at once with `recipientStopped`: ActorSystem.publishDeadLetter looks for a pending
// promise inside a dead-lettered message (only while asks are outstanding).
// Timeouts: the system's AskTimer (one Dispatch timer for all asks, or the virtual clock
// of a DeterministicScheduler; see AskTimer.swift).
// Memory ordering: the continuation is stored before the ask is added to the timer (its
// lock) and the request is sent (the send's ring release), which order it before any
// reader; the CAS (acq_rel) makes the winner the only thread that touches it afterwards.
// The winner removes the ask from the timer, so an answered ask holds no memory.

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

/// A pending ask that can be failed without knowing its reply type (dead letters do it).
protocol AskFailing: AnyObject, Sendable {
    /// The request itself became a dead letter: nobody will answer it.
    func failBecauseRequestDeadLettered()
}

@usableFromInline
final class AskPromise<Reply: Sendable>: MessageRecipient, AskFailing, AskTimingOut, @unchecked Sendable {
    typealias Message = Reply
    // @unchecked: `continuation` and `timer` are written before the request is published
    // and afterwards only by the CAS winner (see file comment).
    static var pending: UInt8 { 0 }
    static var replied: UInt8 { 1 }
    static var failed: UInt8 { 2 }

    let id: ActorID
    let requestID: UInt64
    let system: ActorSystem
    /// The name of the asked actor (for errors).
    let target: String
    let state = Atomic<UInt8>(0)
    /// Resumed exactly once, by the CAS winner (file comment). Unsafe, not checked: the
    /// CAS already rules out a second resume, and a CheckedContinuation's canary was one
    /// more allocation per ask (its leak warning could not fire here anyway: the asker
    /// keeps the promise, and so the continuation, alive until it is resumed).
    var continuation: UnsafeContinuation<Reply, any Error>?
    /// The timeout, as AskTimer's deadline; nil: no timeout.
    let timeout: Duration

    init(system: ActorSystem, target: String, timeout: Duration) {
        self.system = system
        self.target = target
        self.timeout = timeout
        self.id = system.nextActorID()
        self.requestID = askRequestIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    var name: String { "ask#\(requestID)" }
    var watchableCell: AnyActorCell? { nil }
    var mailboxDepth: Int { 0 }
    func stop(_ mode: StopMode) {}

    @discardableResult
    @usableFromInline func deliver(movingFrom source: UnsafeMutableRawPointer) -> Bool {
        deliver(MessageEncoding<Reply>.take(from: source, boxed: false))
    }

    @discardableResult
    func deliver(_ reply: Reply) -> Bool {
        let (won, observed) = state.compareExchange(expected: Self.pending, desired: Self.replied,
                                                    ordering: .acquiringAndReleasing)
        if won, let continuation {
            self.continuation = nil
            resolved()
            threadSanitizerRelease(self)  // what the replier wrote happens-before the asker's next line
            continuation.resume(returning: reply)
            return true
        }
        system.publishDeadLetter(reply, recipient: id, recipientName: name,
                                 reason: observed == Self.failed ? .askTimedOut(requestID: requestID) : .duplicateReply(requestID: requestID),
                                 wasQueued: false)
        return false
    }

    func fail(_ error: AskError) {
        if state.compareExchange(expected: Self.pending, desired: Self.failed, ordering: .acquiringAndReleasing).exchanged,
           let continuation {
            self.continuation = nil
            resolved()
            continuation.resume(throwing: error)
        }
    }

    func failBecauseRequestDeadLettered() {
        fail(.recipientStopped(requestID: requestID, recipient: target))
    }

    func timeOut() {
        fail(.timedOut(requestID: requestID, recipient: target, after: timeout))
    }

    /// The winner's bookkeeping: the ask leaves the system's AskTimer (which releases this
    /// promise now, not at the deadline) and the count of outstanding asks drops.
    private func resolved() {
        system.askTimer.remove(id: requestID)
        system.outstandingAsks.wrappingSubtract(1, ordering: .relaxed)
    }
}

extension ActorRef {
    /// Sends the message built by `makeMessage` — which gets a one-shot reply-to ref with a
    /// unique request id — and awaits the reply.
    ///
    /// - Throws: ``AskError/timedOut(requestID:recipient:after:)`` when no reply came within
    ///   `timeout` (a late reply goes to dead letters), or
    ///   ``AskError/recipientStopped(requestID:recipient:)`` as soon as the request becomes a
    ///   dead letter: the actor had stopped, or stopped before handling it.
    /// - Timeout: any `Duration`; a huge one (`.seconds(Int64.max)`) means "no timeout"
    ///   rather than an overflow, a negative one means "now". Answered asks release their
    ///   timer at once. The timeout is detected on time, but the ask returns only when the
    ///   caller's executor runs it again, a wait the timeout does not cover: see
    ///   "When a timed-out ask returns" in <doc:Guarantees>.
    /// - Ordering: the request is an ordinary tell, ordered after this sender's earlier ones.
    /// - Isolation: runs in the caller's isolation (`#isolation`), so it can be called from
    ///   `@MainActor` code or a native actor with a closure that captures their state.
    public func ask<Reply: Sendable>(
        timeout: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        let system = system
        let promise = AskPromise<Reply>(system: system, target: name, timeout: timeout)
        defer { threadSanitizerAcquire(promise) }
        return try await withUnsafeThrowingContinuation(isolation: isolation) { continuation in
            promise.continuation = continuation
            system.outstandingAsks.wrappingAdd(1, ordering: .relaxed)
            let nanoseconds = timeout.saturatingNanoseconds
            if nanoseconds < AskPromise<Reply>.noTimeoutThreshold {
                system.askTimer.add(promise, id: promise.requestID, timeout: timeout)
            }
            let message = makeMessage(ActorRef<Reply>(promise))
            if !recipient.deliver(message) {
                promise.fail(.recipientStopped(requestID: promise.requestID, recipient: promise.target))
            }
        }
    }
}

extension AskPromise {
    /// Timeouts from here on (about 292 years) are treated as "never": no timer at all.
    static var noTimeoutThreshold: UInt64 { UInt64(Int64.max) / 1_000 }
}

