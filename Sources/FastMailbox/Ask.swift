// Ask: request–reply on top of tell. An AskPromise is a one-shot recipient with a unique
// request id, wrapped in the reply-to ref the message carries. The first of reply,
// timeout or refusal wins a CAS on its state and resumes the caller; a loser (late or
// second reply) is a dead letter. A request dead-lettered itself fails the ask at once
// (ActorSystem.publishDeadLetter). Timeouts: AskTimer.
//
// Ordering: the continuation is stored before the ask joins the timer (its lock) and the
// request is sent (release); the acq_rel CAS makes the winner its only user afterwards.

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

/// A pending ask that dead letters can fail without knowing its reply type.
protocol AskFailing: AnyObject, Sendable {
    /// The request became a dead letter.
    func failBecauseRequestDeadLettered()
}

/// Whom an ask asked, for its errors.
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

/// The reply-type-independent part of an ask's reply slot (compiled once).
@usableFromInline
class AskPromiseBase: AskFailing, RecipientIdentity, @unchecked Sendable {
    // @unchecked: `state` is atomic; everything else is immutable.
    static var pending: UInt8 { 0 }
    static var replied: UInt8 { 1 }
    static var failed: UInt8 { 2 }

    let id: ActorID
    @usableFromInline let requestID: UInt64
    let target: AskTarget
    let state = Atomic<UInt8>(0)
    /// AskTimer's deadline.
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

    /// Before the request is sent: counts and arms the timeout.
    @usableFromInline final func start() {
        system.outstandingAsks.wrappingAdd(1, ordering: .relaxed)
        let nanoseconds = timeout.saturatingNanoseconds
        if nanoseconds < AskPromiseBase.noTimeoutThreshold {
            system.askTimer.add(self, id: requestID, nanoseconds: nanoseconds)
        }
    }

    /// The actor had stopped.
    @usableFromInline final func requestRefused() {
        fail(.recipientStopped(requestID: requestID, recipient: target.name))
    }

    /// Tells TSan the replier's writes happen-before.
    @usableFromInline final func finishAsk() {
        threadSanitizerAcquire(self)
        threadSanitizerAcquireCurrentTask()
    }

    /// Unless it already ended.
    final func fail(_ error: AskError) {
        if state.compareExchange(expected: Self.pending, desired: Self.failed, ordering: .acquiringAndReleasing).exchanged {
            resolved()
            resumeThrowing(error)
        }
    }

    /// The CAS winner only. Overridden by AskPromise.
    func resumeThrowing(_ error: AskError) {
        preconditionFailure("AskPromiseBase.resumeThrowing(_:) must be overridden")
    }

    final func failBecauseRequestDeadLettered() {
        fail(.recipientStopped(requestID: requestID, recipient: target.name))
    }

    final func timeOut() {
        fail(.timedOut(requestID: requestID, recipient: target.name, after: timeout))
    }

    /// Leaves the timer, drops the outstanding count.
    final func resolved() {
        system.askTimer.remove(id: requestID)
        system.outstandingAsks.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Timeouts from here on mean "never": no timer.
    static var noTimeoutThreshold: UInt64 { UInt64(Int64.max) / 1_000 }
}

@usableFromInline
final class AskPromise<Reply: Sendable>: AskPromiseBase, MessageRecipient, @unchecked Sendable {
    typealias Message = Reply
    // @unchecked: `continuation` is written before the request is published, then by
    // the CAS winner only.

    /// Unchecked: a checked continuation allocates.
    @usableFromInline var continuation: UnsafeContinuation<Reply, any Error>?
    /// `context.ask`'s callback instead of a continuation, boxed (an `AskCompletion<Reply>`)
    /// so a plain ask never needs its generic closure type's metadata.
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
    /// Sends the message built by `makeMessage`, which gets a one-shot reply-to ref, and
    /// awaits the reply.
    ///
    /// - Throws: ``AskError/timedOut(requestID:recipient:after:)`` (a late reply is a dead
    ///   letter), or ``AskError/recipientStopped(requestID:recipient:)`` as soon as the
    ///   request is dead-lettered.
    /// - Timeout: any `Duration`; a huge one means none, a negative one "now". The ask
    ///   returns when the caller's executor runs it again (<doc:Guarantees>).
    /// - Ordering: the request is an ordinary tell, after this sender's earlier ones.
    /// - Isolation: runs in the caller's isolation (`#isolation`).
    @inlinable
    public func ask<Reply: Sendable>(
        timeout: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        // Inlinable: the promise's type, the move and the send are concrete here.
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
