// Inbox: the receiving end of a sequential actor; SequentialActorCell owns the wake-up
// protocol. Confined to the body's task (not Sendable): the mailbox's single consumer.
//
// Selective receive keeps skipped messages in `buffer`, scanned oldest first:
//   (I1) buffer[head...] holds skipped messages in per-sender order, all older than
//        anything still in the mailbox.
//   (I2) a receive returns the oldest matching message, buffer first.
//   (I3) cell.buffered == buffer.count - head (shutdown counts it as left).

import MNScheduler
import Synchronization

/// The mailbox of a sequential actor, as its body sees it: `receive` suspends the body,
/// holding no thread, until a message arrives.
///
/// Given only to the body of ``ActorSystem/spawn(of:options:body:)``. Not `Sendable`: use
/// it only from the body's task (hand out ``myself`` instead).
///
/// - Ordering: per-sender order; a selective receive takes the oldest match and keeps
///   the others, in order, for later receives.
/// - Stopped: after `ref.stop()` every receive throws ``ActorStoppedError``; after
///   `.afterDrainingMailbox` or shutdown, receives return what is queued, then throw.
///   `for await` ends instead.
/// - Cancellation: a receive that would wait in a cancelled task throws
///   `CancellationError` (``ActorStoppedError`` if it is the actor's own stop).
/// - Cost: taking a message allocates nothing; waiting costs a continuation, no thread.
public final class Inbox<Message: Sendable> {
    // Confined to the body's task: dynamic exclusivity checks would prove nothing.
    @usableFromInline let cell: SequentialActorCell<Message>
    @exclusivity(unchecked) @usableFromInline var buffer: [Message] = []
    @exclusivity(unchecked) @usableFromInline var head = 0
    /// The body ended: the cell's turn owns the mailbox.
    @exclusivity(unchecked) @usableFromInline var finished = false

    init(cell: SequentialActorCell<Message>) { self.cell = cell }

    /// A reference to this actor, to hand to others.
    public var myself: ActorRef<Message> { ActorRef(cell) }
    /// This actor's identity.
    public var id: ActorID { cell.id }
    /// This actor's name.
    public var name: String { cell.name }
    /// The system the actor lives in.
    public var system: ActorSystem { cell.system }
    /// Skipped by selective receives, kept in order.
    public var bufferedCount: Int { buffer.count - head }

    /// The next message (buffered ones first), waiting as long as it takes.
    /// - Throws: ``ActorStoppedError`` when stopping, `CancellationError` when cancelled.
    // Inlinable: specialised in the body's module.
    @inlinable @inline(__always)
    nonisolated(nonsending) public func receive() async throws -> Message {
        guard head == buffer.count, !finished else { return try await receive(timeout: nil) { _ in true } }
        while true {
            switch try receiveStep() {
            case .message(let message): return message
            case .yield: await Task.yield()
            case .wait:
                // Here, so the hop back names the caller's executor.
                let reason = await _unsafeInheritExecutor_withUnsafeContinuation {
                    (continuation: UnsafeContinuation<SequentialWakeReason, Never>) in _ = cell.suspend(continuation)
                }
                threadSanitizerAcquireCurrentTask()  // a waker may resume before the await
                if reason == .cancelled { throw cell.cancelledError() }
            }
        }
    }

    /// `receive()` for `next(isolation:)`, so the optimizer drops the loop's own hop.
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

    /// The slow path, isolated likewise.
    @usableFromInline
    func receiveBuffered(isolation: isolated (any Actor)?) async throws -> Message {
        try await receive(timeout: nil) { _ in true }
    }

    /// A message, or what to do before looking again.
    @inlinable @inline(__always)
    func receiveStep() throws -> ReceiveStep<Message> {
        if cell.immediateStop.load(ordering: .acquiring) { throw cell.stoppedError() }
        let (message, outcome) = MessageEncoding<Message>.takeOne(from: cell.queue)
        if let message {
            cell.countDelivered()
            return .message(message)
        }
        if outcome == .more { return .yield }  // a producer is between claim and commit (MPSCQueue)
        if cell.queue.isClosed { throw cell.stoppedError() }
        return .wait
    }

    /// The next message (buffered ones first), waiting at most `timeout`.
    /// - Throws: ``ReceiveTimeout``, ``ActorStoppedError`` or `CancellationError`.
    nonisolated(nonsending) public func receive(timeout: Duration) async throws -> Message {
        try await receive(timeout: timeout) { _ in true }
    }

    /// Selective receive: the oldest message matching `predicate` (run on the body's task),
    /// waiting at most `timeout` (nil: forever). Others stay, in order, ahead of newer ones.
    /// - Throws: ``ReceiveTimeout``, ``ActorStoppedError``, or `CancellationError`.
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
            let (message, outcome) = MessageEncoding<Message>.takeOne(from: cell.queue)
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
            if cell.queue.isClosed { throw stoppedError }
            if let deadline, monotonicNanoseconds() >= deadline {
                throw ReceiveTimeout(timeout: timeout ?? .zero, actorName: cell.name, actorID: cell.id)
            }
            let reason = await cell.park(deadline: deadline)
            // Look again; the checks above decide.
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

    /// Buffered messages become dead letters; later receives throw.
    func finish() {
        finished = true
        for message in buffer[head...] { cell.deadLetter(message) }
        buffer = []
        head = 0
        cell.buffered.store(0, ordering: .relaxed)
    }

    /// Saturating: a huge timeout never wraps to "expired".
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
    /// Empty: park, then look again.
    case wait
}

@available(*, unavailable, message: "an Inbox belongs to its actor's body task; hand out `myself` instead")
extension Inbox: Sendable {}

extension Inbox: AsyncSequence {
    public typealias Element = Message
    public typealias Failure = Never

    /// Iterates the messages as they arrive; ends when the actor is stopping or the task is
    /// cancelled. On the body's task.
    public struct Iterator: AsyncIteratorProtocol {
        /// The actor's message type.
        public typealias Element = Message
    /// It ends instead.
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

        /// `for await` calls this one: on the caller's executor, no hop (inlinable).
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
