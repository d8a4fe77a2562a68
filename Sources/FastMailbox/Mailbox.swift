// Mailbox: a typed, many-producer, one-consumer message queue on its own: a thin
// inlinable layer over MNScheduler's MPSCQueue (its invariants and ordering live in
// MPSCQueue.swift and ckshim.h, "Ready marks") and MessageEncoding. Copies share one
// queue. An actor's cell stores its MPSCQueue inline and calls MessageEncoding itself, with
// the same guarantees. Package API (benchmarks, tests); users meet mailboxes only
// through actors.
//  (M1) send is lock-free while the ring has room; a full ring never loses, reorders or
//       blocks: the message joins an ordered overflow under one short lock.
//  (M2) per-sender FIFO.
//  (M3) exactly one send reports `becameNonEmpty` per empty → non-empty transition.
//  (M4) after close(), sends hand the message back; what was inside can still be drained.
//  (M5) the first send allocates the ring (small for a reclaimable queue, full-size
//       after its first burst); an actor's idle ring may be given back.
// A producer preempted mid-send holds up only the consumer: drain() returns `.more`.

import MNScheduler
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a mailbox could not be created.
@usableFromInline package enum MailboxError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The capacity is not a power of two between 4 and 2^20 (``Mailbox/maximumCapacity``).
    case invalidCapacity(Int)
    /// The ring of `capacity` slots (`bytes` bytes) could not be allocated
    /// (``Mailbox/reserveRing()``).
    case ringAllocationFailed(capacity: Int, bytes: Int)

    @usableFromInline package var description: String {
        switch self {
        case .invalidCapacity(let n):
            return "mailbox capacity \(n) is invalid: it must be a power of two between 4 and \(RawRing.maximumCapacity) (2^20; the ring holds capacity − 1 messages before overflowing, in order, beyond it)"
        case .ringAllocationFailed(let capacity, let bytes):
            return "could not allocate the ring of a mailbox of capacity \(capacity) (\(bytes) bytes): out of memory or over a memory limit"
        }
    }
}

/// A lock-free, unbounded, multi-producer single-consumer FIFO of messages.
///
/// Copies are the same mailbox; messages still inside when the last copy goes are
/// released. Every actor of an ``ActorSystem`` owns one.
///
/// - Thread-safety: ``send(_:)``, ``trySend(_:)``, ``close()``, ``isClosed`` and
///   ``count`` from any thread. ``drain(max:_:)`` and ``closeAndDrain()`` belong to the
///   single consumer: one thread at a time, each happening-before the next.
/// - Ordering: messages from one sender are drained in the order sent.
/// - Full: ``send(_:)`` never fails or blocks (ordered overflow);
///   ``trySend(_:)`` returns ``TrySendResult/full(_:)``.
/// - Closed: sends are refused with the message handed back.
/// - Cost: <doc:Guarantees#Mailboxes-and-allocation>.
@usableFromInline package struct Mailbox<Message: Sendable>: Sendable {
    /// The result of ``send(_:)``.
    @usableFromInline package enum SendResult: Sendable {
        /// Accepted; `becameNonEmpty` for exactly the send that must schedule the consumer.
        case accepted(becameNonEmpty: Bool)
        /// The mailbox is closed; the message is handed back untouched.
        case closed(Message)

        /// True when the message was accepted.
        package var isAccepted: Bool { if case .accepted = self { true } else { false } }
        /// True when this send took the mailbox from empty to non-empty.
        package var becameNonEmpty: Bool { if case .accepted(true) = self { true } else { false } }
    }

    /// The result of ``trySend(_:)``.
    @usableFromInline package enum TrySendResult: Sendable {
        /// Accepted, as ``SendResult/accepted(becameNonEmpty:)``.
        case accepted(becameNonEmpty: Bool)
        /// The ring is full (or the overflow is in use): nothing was enqueued.
        case full(Message)
        /// The mailbox is closed; the message is handed back untouched.
        case closed(Message)
    }

    /// What ``drain(max:_:)`` left behind.
    @usableFromInline package enum DrainOutcome: Equatable, Sendable {
        /// The mailbox is empty; the next send reports `becameNonEmpty`.
        case empty
        /// Messages remain (or a preempted sender is still committing one): drain again later.
        case more
    }

    /// The queue, in its own object (a cell stores its queue inline and uses
    /// MessageEncoding directly).
    @usableFromInline let box: MPSCQueueBox

    @usableFromInline typealias Encoding = MessageEncoding<Message>

    /// The largest capacity accepted; beyond the ring a mailbox overflows in order.
    package static var maximumCapacity: Int { RawRing.maximumCapacity }

    /// Creates an empty mailbox of `capacity` ring slots (a power of two in
    /// 4...``maximumCapacity``; `capacity − 1` messages before overflow). The ring is
    /// allocated at the first send or ``reserveRing()``.
    /// - Throws: ``MailboxError/invalidCapacity(_:)`` naming the bad value.
    @inlinable
    package init(capacity: Int = 256) throws(MailboxError) {
        do { box = try Encoding.makeQueueBox(capacity: capacity) } catch { throw .invalidCapacity(capacity) }
    }

    /// Allocates the ring now, so no later send allocates (a send would trap on failure;
    /// this throws). Any thread; idempotent.
    /// - Throws: ``MailboxError/ringAllocationFailed(capacity:bytes:)``; the mailbox stays
    ///   usable.
    package func reserveRing() throws(MailboxError) {
        do {
            try Encoding.reserveRing(of: box.queue)
        } catch {
            throw .ringAllocationFailed(capacity: error.capacity, bytes: error.bytes)
        }
    }

    /// Sends `message` from any thread; never blocks or drops. See ``SendResult``.
    @inlinable @inline(__always)
    package func send(_ message: consuming Message) -> SendResult {
        let (result, refused) = enqueue(message)
        switch result {
        case .accepted(let first): return .accepted(becameNonEmpty: first)
        case .closed: return .closed(refused.unsafelyUnwrapped)
        }
    }

    /// Sends only if the ring has room now. Lock-free; never waits for another sender.
    @inlinable
    package func trySend(_ message: consuming Message) -> TrySendResult {
        let (result, refused) = tryEnqueue(message)
        switch result {
        case .accepted(let first)?: return .accepted(becameNonEmpty: first)
        case .closed?: return .closed(refused.unsafelyUnwrapped)
        case nil: return .full(refused.unsafelyUnwrapped)
        }
    }

    /// Consumer only: hands up to `max` messages to `body`, no atomic RMW per message.
    @inlinable
    package func drain(max: Int, _ body: (Message) -> Void) -> DrainOutcome {
        switch take(max: max, body) {
        case .empty: return .empty
        case .more: return .more
        }
    }

    /// Refuses every later send with `.closed`. Any thread; idempotent. Messages inside
    /// stay drainable.
    @inlinable @inline(__always)
    package func close() { box.queue.markClosed() }

    /// Consumer only: closes the mailbox and returns everything inside, in order.
    package func closeAndDrain() -> [Message] {
        box.queue.markClosed()
        var out: [Message] = []
        while take(max: Int.max, { out.append($0) }) == .more {
            sched_yield()  // a sender between claim and publish finishes shortly
        }
        return out
    }

    /// True once ``close()`` or ``closeAndDrain()`` ran.
    @inlinable @inline(__always) package var isClosed: Bool { box.queue.isClosed }

    /// Messages accepted and not yet drained (a snapshot).
    @inlinable @inline(__always) package var count: Int { box.queue.approximateCount }

    /// Ring slots (it holds `capacity − 1` before overflowing).
    package var capacity: Int { box.queue.capacity }

    /// Sends that took the overflow path because the ring was full.
    package var overflowSendCount: Int { box.queue.overflowAppends }

    /// Bytes of the ring, 0 until the first send.
    package var ringBytes: Int { box.queue.ringBytes }

    /// Heap bytes of the idle mailbox's one object (no ring), as the allocator reports them.
    package var idleFootprintBytes: Int { heapBlockSize(of: box) }
}

// MARK: the typed operations behind send, trySend and drain (internal)

extension Mailbox {
    @inlinable @inline(__always) static var isBoxed: Bool { Encoding.isBoxed }

    /// On `.closed` hands the message back.
    @inlinable @inline(__always)
    func enqueue(_ message: consuming Message) -> (MPSCQueue.EnqueueResult, Message?) {
        Encoding.enqueue(message, into: box.queue)
    }

    /// Ring-only: nil means full; unless accepted, the message comes back.
    @inlinable
    func tryEnqueue(_ message: consuming Message) -> (MPSCQueue.EnqueueResult?, Message?) {
        Encoding.tryEnqueue(message, into: box.queue)
    }

    /// Consumer only; specialised (see MPSCQueue.drain).
    @inlinable @inline(__always)
    func take(max: Int, _ body: (Message) -> Void) -> MPSCQueue.DrainOutcome {
        Encoding.drain(box.queue, max: max, body)
    }
}
