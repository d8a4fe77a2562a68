// BoundedMailboxWaiters — the senders waiting for room in a full bounded mailbox
// (``ActorRef/send(_:)``), in arrival order, with their messages.
//
// A bounded mailbox is a ring with no overflow: it holds at most capacity − 1 messages.
// `tell` on a full one dead-letters (`.mailboxFull`), `trySend` hands the message back,
// `send` waits here. Invariants (all state under `state`'s lock):
//  (W1) FIFO: a sender that finds waiters queues behind them even if a slot is free, and
//       only the actor's own turn moves waiting messages into the ring, oldest first
//       (`admit`), so waiting senders' messages enter in the order they arrived.
//  (W2) no lost wake-up: a sender re-checks for room under the lock before it waits; the
//       turn frees slots (drain) before it takes the lock in `admit`. So either the sender
//       sees the freed slot, or the turn sees the waiter. The turn looks whenever
//       `count` > 0 after draining, and a full mailbox always has a turn coming (it holds
//       messages), so every waiter is admitted, cancelled or failed.
//  (W3) nothing lost: a waiting message is owned by its record until exactly one of
//       admit (into the ring; the sender's `send` returns), cancel (back to the sender in
//       `SendError.cancelled`) or failAll (the actor stopped: `SendError.stopped`) takes it.
// `count` mirrors the list's length (written under the lock, read without it: a hint).

import MNScheduler
import Synchronization

final class BoundedMailboxWaiters<Message: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is a Lock; `count` an Atomic.
    typealias Continuation = CheckedContinuation<Result<Void, SendError<Message>>, Never>
    struct Waiter {
        let id: UInt64
        var message: Message?
        let continuation: Continuation
    }
    struct State {
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }
    private enum Now { case accepted(Bool), stopped(Message), wait }
    private let state = Lock(State())
    /// Waiting senders (a hint for the fast paths; see the file comment).
    let count = Atomic<Int>(0)

    /// `send` on a mailbox that was full: waits for room unless, under the lock, the
    /// mailbox has room and nobody waits (then enqueues now), or it is closed.
    func send(_ message: Message, into mailbox: MPSCQueue, scheduling cell: AnyActorCell) async throws(SendError<Message>) {
        let id = state.withLock { state -> UInt64 in state.nextID &+= 1; return state.nextID }
        let result: Result<Void, SendError<Message>> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                enqueueOrWait(id: id, message: message, mailbox: mailbox, cell: cell, continuation: continuation)
            }
        } onCancel: {
            cancel(id: id)
        }
        try result.get()
    }

    private func enqueueOrWait(id: UInt64, message: Message, mailbox: MPSCQueue, cell: AnyActorCell,
                               continuation: Continuation) {
        let now: Now = state.withLock { state in
            if state.waiters.isEmpty {
                let (result, refused) = MessageEncoding<Message>.tryEnqueue(message, into: mailbox)
                switch result {
                case .accepted(let first)?: return .accepted(first)
                case .closed?: return .stopped(refused!)
                case nil: break
                }
            } else if mailbox.isClosed {
                return .stopped(message)
            }
            state.waiters.append(Waiter(id: id, message: message, continuation: continuation))
            count.store(state.waiters.count, ordering: .relaxed)
            return .wait
        }
        switch now {
        case .accepted(let first):
            if first { cell.scheduleSelf() }
            continuation.resume(returning: .success(()))
        case .stopped(let message):
            continuation.resume(returning: .failure(.stopped(message)))
        case .wait:
            break
        }
    }

    /// The sender's task was cancelled: if its message still waits, hand it back.
    private func cancel(id: UInt64) {
        let cancelled: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            count.store(state.waiters.count, ordering: .relaxed)
            return waiter
        }
        if let cancelled { cancelled.continuation.resume(returning: .failure(.cancelled(cancelled.message!))) }
    }

    /// The actor's turn, after draining: moves waiting messages into the ring, oldest
    /// first, while there is room. Returns true if the mailbox went from idle to busy
    /// (the caller schedules the actor). Turn only.
    func admit(into mailbox: MPSCQueue) -> Bool {
        var becameNonEmpty = false
        var resumed: [Continuation] = []
        var stopped: [Waiter] = []
        state.withLock { state in
            while !state.waiters.isEmpty {
                let (result, refused) = MessageEncoding<Message>.tryEnqueue(state.waiters[0].message!, into: mailbox)
                if case .accepted(let first)? = result {
                    becameNonEmpty = becameNonEmpty || first
                    resumed.append(state.waiters.removeFirst().continuation)
                } else if result == .closed {
                    state.waiters[0].message = refused
                    stopped = state.waiters
                    state.waiters = []
                } else {
                    break  // full again
                }
            }
            count.store(state.waiters.count, ordering: .relaxed)
        }
        for continuation in resumed { continuation.resume(returning: .success(())) }
        for waiter in stopped { waiter.continuation.resume(returning: .failure(.stopped(waiter.message!))) }
        return becameNonEmpty
    }

    /// The actor stopped: every waiting sender gets its message back.
    func failAll() {
        let all: [Waiter] = state.withLock { state in
            defer { state.waiters = []; count.store(0, ordering: .relaxed) }
            return state.waiters
        }
        for waiter in all { waiter.continuation.resume(returning: .failure(.stopped(waiter.message!))) }
    }
}
