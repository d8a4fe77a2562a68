// Ask: request–reply on top of tell.
//
// `ref.ask { replyTo in .get(replyTo: replyTo) }` creates an AskPromise: a one-shot
// recipient with a unique request id, wrapped in the ActorRef<Reply> the message carries.
// The first of reply, timeout or refusal wins a CAS on the promise's state and resumes
// the caller. Whatever loses (a late reply, a second reply) goes to dead letters with the
// request id. A request that is itself dead-lettered fails the ask at once with
// `recipientStopped`: ActorSystem.publishDeadLetter looks for a pending promise inside.
// Timeouts: the system's AskTimer.
//
// Memory ordering: the continuation is stored before the ask joins the timer (its lock)
// and before the request is sent (the send's release). The acq_rel CAS makes the winner
// the only thread that touches it afterwards. The winner removes the ask from the timer.

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

/// Whom an ask asked, for its errors: an actor's cell (its name formatted only when an
/// error needs it) or another recipient's name.
@usableFromInline
enum AskTarget: Sendable {
    case cell(AnyActorCell)
    case named(String, system: ActorSystem)

    var system: ActorSystem {
        switch self {
        case .cell(let cell): cell.system
        case .named(_, let system): system
        }
    }

    var name: String {
        switch self {
        case .cell(let cell): cell.name
        case .named(let name, _): name
        }
    }
}

/// The part of an ask's reply slot that does not depend on the reply's type. Not generic,
/// so the timer holds promises as this class and the bookkeeping is compiled once.
@usableFromInline
class AskPromiseBase: AskFailing, RecipientIdentity, @unchecked Sendable {
    // @unchecked: `state` is atomic; everything else is immutable.
    static var pending: UInt8 { 0 }
    static var replied: UInt8 { 1 }
    static var failed: UInt8 { 2 }

    let id: ActorID
    @usableFromInline let requestID: UInt64
    /// Whom the ask asked (for errors).
    let target: AskTarget
    let state = Atomic<UInt8>(0)
    /// The timeout, as AskTimer's deadline.
    let timeout: Duration

    var system: ActorSystem { target.system }
    var name: String { "ask#\(requestID)" }
    var mailboxDepth: Int { 0 }
    func stop(_ mode: StopMode) {}
    var watchableCell: AnyActorCell? { nil }

    init(asking target: AskTarget, timeout: Duration) {
        self.target = target
        self.timeout = timeout
        self.id = target.system.nextActorID()
        self.requestID = askRequestIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The asker's bookkeeping once its continuation is stored, before the request is
    /// sent: counts the ask and arms its timeout.
    @usableFromInline final func start() {
        system.outstandingAsks.wrappingAdd(1, ordering: .relaxed)
        let nanoseconds = timeout.saturatingNanoseconds
        if nanoseconds < AskPromiseBase.noTimeoutThreshold {
            system.askTimer.add(self, id: requestID, nanoseconds: nanoseconds)
        }
    }

    /// The request was dead-lettered as it was sent (the actor had stopped).
    @usableFromInline final func requestRefused() {
        fail(.recipientStopped(requestID: requestID, recipient: target.name))
    }

    /// After the asker's continuation returned or threw: tells ThreadSanitizer that the
    /// replier's writes happen-before the asker's next line.
    @usableFromInline final func finishAsk() {
        threadSanitizerAcquire(self)
        threadSanitizerAcquireCurrentTask()
    }

    /// Fails the ask unless it already ended; the CAS makes the winner the only thread that
    /// resumes the continuation.
    final func fail(_ error: AskError) {
        if state.compareExchange(expected: Self.pending, desired: Self.failed, ordering: .acquiringAndReleasing).exchanged {
            resolved()
            resumeThrowing(error)
        }
    }

    /// Resumes the asker with `error` (the CAS winner only). Overridden by AskPromise.
    func resumeThrowing(_ error: AskError) {
        preconditionFailure("AskPromiseBase.resumeThrowing(_:) must be overridden")
    }

    final func failBecauseRequestDeadLettered() {
        fail(.recipientStopped(requestID: requestID, recipient: target.name))
    }

    final func timeOut() {
        fail(.timedOut(requestID: requestID, recipient: target.name, after: timeout))
    }

    /// The winner's bookkeeping: the ask leaves the timer, which releases this promise now,
    /// and the count of outstanding asks drops.
    final func resolved() {
        system.askTimer.remove(id: requestID)
        system.outstandingAsks.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Timeouts from here on (about 292 years) mean "never": no timer at all.
    static var noTimeoutThreshold: UInt64 { UInt64(Int64.max) / 1_000 }
}

@usableFromInline
final class AskPromise<Reply: Sendable>: AskPromiseBase, MessageRecipient, @unchecked Sendable {
    typealias Message = Reply
    // @unchecked: `continuation` is written before the request is published, then only by
    // the CAS winner.

    /// Resumed exactly once, by the CAS winner. Unsafe, not checked: the CAS already rules
    /// out a second resume, and a checked continuation allocates.
    @usableFromInline var continuation: UnsafeContinuation<Reply, any Error>?
    /// Called with the outcome instead of resuming a continuation, by the CAS winner only
    /// (`context.ask`: ActorContext+Ask.swift). Written before the request is sent, like
    /// `continuation`, and never set together with it. Boxed (an `AskCompletion<Reply>`)
    /// so that a plain ask never needs the metadata of its generic closure type.
    var completion: AnyObject?

    @usableFromInline override init(asking target: AskTarget, timeout: Duration) {
        super.init(asking: target, timeout: timeout)
    }

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
        if won, let completion {
            self.completion = nil
            resolved()
            // A tell to the asking actor: its edge orders the rest.
            unsafeDowncast(completion, to: AskCompletion<Reply>.self).succeed(reply)
            return true
        }
        system.publishDeadLetter(reply, recipient: id, recipientName: name,
                                 reason: observed == Self.failed ? .askTimedOut(requestID: requestID) : .duplicateReply(requestID: requestID),
                                 wasQueued: false)
        return false
    }

    override func resumeThrowing(_ error: AskError) {
        if let completion {
            self.completion = nil
            unsafeDowncast(completion, to: AskCompletion<Reply>.self).fail(error)
            return
        }
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(throwing: error)
    }
}

/// A `context.ask`'s outcome handler, boxed for `AskPromise.completion`.
final class AskCompletion<Reply: Sendable>: Sendable {
    let body: @Sendable (Result<Reply, any Error>) -> Void
    init(_ body: @escaping @Sendable (Result<Reply, any Error>) -> Void) { self.body = body }
    // Out of line: the caller, unspecialised, then never builds a Result's metadata.
    @inline(never) func succeed(_ reply: Reply) { body(.success(reply)) }
    @inline(never) func fail(_ error: any Error) { body(.failure(error)) }
}

extension ActorRef {
    /// Sends the message built by `makeMessage` — which gets a one-shot reply-to ref with a
    /// unique request id — and awaits the reply.
    ///
    /// - Throws: ``AskError/timedOut(requestID:recipient:after:)`` when no reply came within
    ///   `timeout` (a late reply goes to dead letters), or
    ///   ``AskError/recipientStopped(requestID:recipient:)`` as soon as the request becomes a
    ///   dead letter: the actor had stopped, or stopped before handling it.
    /// - Timeout: any `Duration`; a huge one (`.seconds(Int64.max)`) means "no timeout",
    ///   a negative one means "now". Answered asks release their timer at once. The timeout
    ///   is detected on time, but the ask returns only when the caller's executor runs it
    ///   again (see "When a timed-out ask returns" in <doc:Guarantees>).
    /// - Ordering: the request is an ordinary tell, ordered after this sender's earlier ones.
    /// - Isolation: runs in the caller's isolation (`#isolation`), so it can be called from
    ///   `@MainActor` code or a native actor with a closure that captures their state.
    @inlinable
    public func ask<Reply: Sendable>(
        timeout: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        // Inlinable, so the promise's type, the message's move and the send are concrete
        // at the call site.
        let promise = AskPromise<Reply>(asking: askTarget, timeout: timeout)
        defer { promise.finishAsk() }
        return try await withUnsafeThrowingContinuation(isolation: isolation) { continuation in
            promise.continuation = continuation
            promise.start()
            let message = makeMessage(ActorRef<Reply>(target: .promise(promise)))
            if !MessageEncoding<Message>.withMovable(message, { Self.deliver(target, movingFrom: $0) }) {
                promise.requestRefused()
            }
        }
    }
}
