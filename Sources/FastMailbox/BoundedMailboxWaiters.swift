// BoundedMailboxWaiters — the senders waiting for room in a full bounded mailbox
// (``ActorRef/send(_:)``), in arrival order, with their messages.
//
// A bounded mailbox is a ring with no overflow: it holds at most capacity − 1 messages.
// `tell` on a full one dead-letters (`.mailboxFull`), `trySend` hands the message back,
// `send` waits here. Invariants (all state under `state`'s lock):
//  (W1) FIFO: a sender that finds waiters queues behind them even if a slot is free, and
//       only the actor's own turn moves waiting messages into the ring, oldest first
//       (`admit`), so waiting senders' messages enter in the order they arrived.
//  (W2) no lost wake-up: the turn looks at `count` after its drain, and admits (under the
//       lock) when it is > 0. The lock alone does not close the gap: a sender can find
//       the ring full, then the turn drain the ring dry, read `count` == 0 and go idle,
//       and only then the sender record itself (BoundedMailboxTests replays exactly that
//       with `BoundedMailboxWaitersTestHook`). So a sender that recorded itself then claims
//       the mailbox's consumer like a producer that inserted an item
//       (MPSCQueue.claimConsumerForWaiter, the same Dekker pair as "Who runs the
//       consumer" in MPSCQueue.swift, with `count` in place of the ring): either it takes
//       the idle consumer and schedules a turn, which sees it, or a turn is running or
//       due whose `count` load comes after its idle store and so sees it. Every waiter is
//       therefore admitted, cancelled or failed.
//  (W3) nothing lost: a waiting message is owned by its record until exactly one of
//       admit (into the ring; the sender's `send` returns), cancel (back to the sender in
//       `SendError.cancelled`) or failAll (the actor stopped: `SendError.stopped`) takes it.
//  (W4) a stop fails every waiter at once, and no sender waits after it: every stop closes
//       the mailbox and then calls failAll (ActorCellBase.closeMailbox, from `ref.stop`, a
//       parent's stop, shutdown, and the turn's own stop), without waiting for the turn in
//       hand. A sender records itself only under the lock, after finding the mailbox open
//       there (tryEnqueue's closed check, or `isClosed`). So either it holds the lock
//       before failAll does, and failAll takes its record; or failAll's lock comes first,
//       and then so does the close (before failAll, on the stopping thread): the sender's
//       check, after the lock, sees it and refuses at once. BoundedMailboxTests replays
//       both orders with `BoundedMailboxWaitersTestHook`. (A turn's admit after the close
//       meets it too: `.closed`, and the rest fail.)
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
    func send(_ message: Message, into mailbox: Mailbox<Message>, scheduling cell: AnyActorCell) async throws(SendError<Message>) {
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

    private func enqueueOrWait(id: UInt64, message: Message, mailbox: Mailbox<Message>, cell: AnyActorCell,
                               continuation: Continuation) {
        #if DEBUG
        BoundedMailboxWaitersTestHook.pauseIfArmed(at: .beforeLock)
        #endif
        let now: Now = state.withLock { state in
            if state.waiters.isEmpty {
                let (result, refused) = mailbox.tryEnqueue(message)
                switch result {
                case .accepted(let first)?: return .accepted(first)
                case .closed?: return .stopped(refused!)
                case nil: break
                }
            } else if mailbox.isClosed {
                return .stopped(message)
            }
            #if DEBUG
            BoundedMailboxWaitersTestHook.pauseIfArmed(at: .beforeRecord)
            #endif
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
            // (W2): make sure a turn follows that sees this waiter.
            if mailbox.queue.claimConsumerForWaiter() { cell.scheduleSelf() }
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
    func admit(into mailbox: Mailbox<Message>) -> Bool {
        var becameNonEmpty = false
        var resumed: [Continuation] = []
        var stopped: [Waiter] = []
        state.withLock { state in
            while !state.waiters.isEmpty {
                let (result, refused) = mailbox.tryEnqueue(state.waiters[0].message!)
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

    /// The actor stopped: every waiting sender gets its message back. Called after the
    /// mailbox closed (W4), so nobody records itself afterwards.
    func failAll() {
        let all: [Waiter] = state.withLock { state in
            defer { state.waiters = []; count.store(0, ordering: .relaxed) }
            return state.waiters
        }
        for waiter in all { waiter.continuation.resume(returning: .failure(.stopped(waiter.message!))) }
    }
}

#if DEBUG
/// Debug builds only: pauses the next sender that found the mailbox full at one of two
/// points, so a test can run the actor's last drain (W2 in the file comment) or a stop (W4)
/// in that gap.
enum BoundedMailboxWaitersTestHook {
    enum Point: Equatable, Sendable {
        /// Before it takes the waiters' lock: a stop can run to its end here.
        case beforeLock
        /// Under the waiters' lock, about to record itself: the actor's last drain can run
        /// here (W2), and a stop can close the mailbox and then wait for the lock (W4).
        case beforeRecord
    }
    private static let armed = Lock<(point: Point, action: @Sendable () -> Void)?>(nil)

    /// The next sender to reach `point` runs `action` there; then the hook disarms itself.
    static func arm(at point: Point = .beforeRecord, _ action: @escaping @Sendable () -> Void) {
        armed.withLock { $0 = (point, action) }
    }

    static func pauseIfArmed(at point: Point) {
        let action = armed.withLock { armed -> (@Sendable () -> Void)? in
            guard let hook = armed, hook.point == point else { return nil }
            armed = nil
            return hook.action
        }
        action?()
    }
}
#endif
