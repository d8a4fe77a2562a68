// Inbox: the receiving end of a sequential actor. SequentialActorCell owns the wake-up
// protocol and says who consumes the mailbox.
//
// Selective receive keeps skipped messages in `buffer`, and every later receive scans it,
// oldest first, before taking anything new. Invariants:
//   (I1) buffer[head...] holds skipped messages in per-sender order, all older than
//        anything still in the mailbox.
//   (I2) a receive returns the oldest matching message: from the buffer first, else from
//        the mailbox (skipped ones join the buffer).
//   (I3) cell.buffered == buffer.count - head; shutdown reads it to account what is left.
// An Inbox is confined to its actor's body task (it is not Sendable), which makes it the
// mailbox's single consumer.

import MNScheduler
import Synchronization

/// The mailbox of a sequential actor, as its body sees it: `receive` suspends the body
/// (without holding a thread) until a message arrives.
///
/// Obtained only as the argument of the body passed to
/// ``ActorSystem/spawn(of:options:body:)``. Not `Sendable`: use it only
/// from the body's task (that makes it the single consumer; hand out ``myself`` instead).
///
/// - Ordering: messages from one sender arrive in the order sent; a selective receive
///   takes the oldest matching message and leaves the others, in order, for later receives.
/// - Stopped: after `ref.stop()` (immediately) every receive throws ``ActorStoppedError``;
///   after `ref.stop(.afterDrainingMailbox)` or `ActorSystem.shutdown()` receives return
///   what is already queued, then throw it. `for await` over the inbox ends instead.
/// - Cancellation: a receive that would have to wait in a cancelled task throws
///   `CancellationError` (``ActorStoppedError`` when the cancellation is the actor's own
///   stop); messages already there are still returned.
/// - Cost: taking a message is one ring dequeue, specialised in the body's module, and
///   allocates nothing; waiting costs a continuation and no thread; a send that finds the
///   inbox empty wakes the waiting body with one compare-and-swap (lock-free; other sends
///   do no more than an ordinary mailbox send).
public final class Inbox<Message: Sendable> {
    // Confined to the body's task, so dynamic exclusivity checks would prove nothing.
    @usableFromInline let cell: SequentialActorCell<Message>
    @exclusivity(unchecked) @usableFromInline var buffer: [Message] = []
    @exclusivity(unchecked) @usableFromInline var head = 0
    /// Set when the body has ended: the cell's turn owns the mailbox from then on.
    @exclusivity(unchecked) @usableFromInline var finished = false

    init(cell: SequentialActorCell<Message>) { self.cell = cell }

    /// A reference to this actor, to hand to others (e.g. as a reply-to).
    public var myself: ActorRef<Message> { ActorRef(cell) }
    /// This actor's identity.
    public var id: ActorID { cell.id }
    /// This actor's name.
    public var name: String { cell.name }
    /// The system the actor lives in.
    public var system: ActorSystem { cell.system }
    /// Messages skipped by selective receives and kept, in order, for later receives.
    public var bufferedCount: Int { buffer.count - head }

    /// The next message (buffered ones first), waiting as long as it takes. Like every
    /// receive, it runs on the caller's executor (`nonisolated(nonsending)`), so taking a
    /// message costs no executor hop.
    /// - Throws: ``ActorStoppedError`` when the actor is stopping (see the type's
    ///   documentation), `CancellationError` when the task is cancelled otherwise.
    // Inlinable, so it is specialised in the body's module: a ring dequeue, and waiting is
    // one continuation with no other async call in between.
    @inlinable @inline(__always)
    nonisolated(nonsending) public func receive() async throws -> Message {
        guard head == buffer.count, !finished else { return try await receive(timeout: nil) { _ in true } }
        while true {
            switch try receiveStep() {
            case .message(let message): return message
            case .yield: await Task.yield()
            case .wait:
                // The continuation right here, so its hop back names the caller's executor.
                let reason = await _unsafeInheritExecutor_withUnsafeContinuation {
                    (continuation: UnsafeContinuation<SequentialWakeReason, Never>) in _ = cell.suspend(continuation)
                }
                threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
                if reason == .cancelled { throw cell.cancelledError() }
            }
        }
    }

    /// `receive()` for the iterator's `next(isolation:)`, isolated to the caller's value
    /// itself. Inlined into a `for await` loop, the hop after the wait names the loop's
    /// executor, so the optimizer drops the loop's own hop.
    @inlinable @inline(__always)
    func receive(isolation: isolated (any Actor)?) async throws -> Message {
        guard head == buffer.count, !finished else { return try await receiveBuffered(isolation: isolation) }
        while true {
            switch try receiveStep() {
            case .message(let message): return message
            case .yield: await Task.yield()
            case .wait: if await cell.park(isolation: isolation) == .cancelled { throw cell.cancelledError() }
            }
        }
    }

    /// The slow path of `receive(isolation:)`, isolated to the same value so its return
    /// needs no extra hop.
    @usableFromInline
    func receiveBuffered(isolation: isolated (any Actor)?) async throws -> Message {
        try await receive(timeout: nil) { _ in true }
    }

    /// One step of a receive with nothing set aside (no suspension): a message, or what the
    /// caller must do before it looks again. Throws when the actor is stopping.
    @inlinable @inline(__always)
    func receiveStep() throws -> ReceiveStep<Message> {
        if cell.immediateStop.load(ordering: .acquiring) { throw cell.stoppedError() }
        let (message, outcome) = Mailbox<Message>.takeOne(from: cell)
        if let message {
            cell.countDelivered()
            return .message(message)
        }
        if outcome == .more { return .yield }  // a producer is between claim and commit (MPSCQueue)
        if cell.isClosed { throw cell.stoppedError() }
        return .wait
    }

    /// The next message (buffered ones first), waiting at most `timeout`.
    /// - Throws: ``ReceiveTimeout`` when none arrived in time (a later message is kept for
    ///   the next receive), ``ActorStoppedError``, or `CancellationError`.
    nonisolated(nonsending) public func receive(timeout: Duration) async throws -> Message {
        try await receive(timeout: timeout) { _ in true }
    }

    /// Selective receive: the oldest message for which `predicate` is true, waiting at most
    /// `timeout` (nil: forever). Messages that don't match stay in the inbox, in order, and
    /// are returned by later receives before newer ones.
    ///
    /// `predicate` runs on the body's task, once per message examined (again on a later
    /// call for messages it skipped).
    /// - Throws: ``ReceiveTimeout`` (skipped messages stay buffered), ``ActorStoppedError``
    ///   (when stopping immediately, or closed with nothing matching left), or
    ///   `CancellationError`.
    nonisolated(nonsending) public func receive(timeout: Duration? = nil, where predicate: (Message) -> Bool) async throws -> Message {
        guard !finished, !cell.immediateStop.load(ordering: .acquiring) else { throw stoppedError }
        var index = head
        while index < buffer.count {
            if predicate(buffer[index]) { return takeBuffered(at: index) }
            index += 1
        }
        let deadline = timeout.map(Inbox.deadline(after:))
        while true {
            if cell.immediateStop.load(ordering: .acquiring) { throw stoppedError }
            let (message, outcome) = Mailbox<Message>.takeOne(from: cell)
            if let message {
                if predicate(message) {
                    cell.countDelivered()
                    return message
                }
                buffer.append(message)
                cell.buffered.store(buffer.count - head, ordering: .relaxed)
                continue
            }
            if outcome == .more {  // a producer is between claim and commit (MPSCQueue)
                await Task.yield()
                continue
            }
            if cell.isClosed { throw stoppedError }
            if let deadline, monotonicNanoseconds() >= deadline {
                throw ReceiveTimeout(timeout: timeout ?? .zero, actorName: cell.name, actorID: cell.id)
            }
            let reason = await cell.park(deadline: deadline)
            // .signalled, .stopped, .timedOut: look again; the checks above decide
            if reason == .cancelled { throw cell.cancelledError() }
        }
    }

    // MARK: internals

    private var stoppedError: any Error { cell.stoppedError() }

    private func takeBuffered(at index: Int) -> Message {
        let message: Message
        if index == head {
            message = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 32, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
        } else {
            message = buffer.remove(at: index)
        }
        cell.buffered.store(buffer.count - head, ordering: .relaxed)
        cell.countDelivered()
        return message
    }

    /// The body ended: buffered messages go to dead letters; later receives throw.
    func finish() {
        finished = true
        for message in buffer[head...] { cell.deadLetter(message) }
        buffer = []
        head = 0
        cell.buffered.store(0, ordering: .relaxed)
    }

    /// The deadline `timeout` from now, saturating: a huge timeout never wraps to "expired".
    static func deadline(after timeout: Duration) -> UInt64 {
        timeout.saturatingDeadline()
    }
}

/// What `Inbox.receiveStep` found.
@usableFromInline
enum ReceiveStep<Message> {
    case message(Message)
    /// A producer is between claim and commit: yield, then look again.
    case yield
    /// The mailbox is empty: park, then look again.
    case wait
}

@available(*, unavailable, message: "an Inbox belongs to its actor's body task; hand out `myself` instead")
extension Inbox: Sendable {}

extension Inbox: AsyncSequence {
    public typealias Element = Message
    public typealias Failure = Never

    /// Iterates the messages as they arrive; ends (returns nil) when the actor is stopping
    /// (see ``Inbox``) or the task is cancelled. One iteration at a time, on the body's task.
    public struct Iterator: AsyncIteratorProtocol {
        /// The actor's message type.
        public typealias Element = Message
        /// Iteration never throws: it ends instead.
        public typealias Failure = Never

        @usableFromInline let inbox: Inbox<Message>

        @inlinable init(inbox: Inbox<Message>) { self.inbox = inbox }

        @inlinable
        public mutating func next() async -> Message? {
            do {
                return try await inbox.receive()
            } catch {
                return nil
            }
        }

        /// `for await` calls this one: it runs on the caller's executor, like ``Inbox/receive()``,
        /// so taking a message costs no executor hop. Inlinable, like ``Inbox/receive()``.
        @inlinable @inline(__always)
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Message? {
            do {
                return try await inbox.receive(isolation: actor)
            } catch {
                return nil
            }
        }
    }

    @inlinable public func makeAsyncIterator() -> Iterator { Iterator(inbox: self) }
}
