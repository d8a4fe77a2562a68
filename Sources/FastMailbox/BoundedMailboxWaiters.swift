// BoundedMailboxWaiters: the senders waiting in ``ActorRef/send(_:)`` for room in a full
// bounded mailbox, in arrival order, with their messages, under `state`'s lock (`count`
// is a lock-free hint).
//  (W1) FIFO: a sender that finds waiters queues behind them; only the actor's turn moves
//       waiting messages into the ring, oldest first.
//  (W2) no lost wake-up: a sender that recorded itself then claims the consumer like a
//       producer (MPSCQueue.claimConsumerForWaiter), so a turn follows that sees it.
//  (W3) nothing lost: a waiting message is owned by its record until exactly one of
//       admit, cancel or failAll takes it.
//  (W4) no sender waits after a stop: every stop closes the mailbox, then calls failAll;
//       a sender records itself only under the lock, after finding the mailbox open.
// Why W2 and W4 hold: <doc:ActorCells>, "Bounded mailboxes" (tests replay both races).

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
    /// A hint for the fast paths.
    let count = Atomic<Int>(0)

    /// Waits for room unless, under the lock, there is room and nobody waits, or it is closed.
    /// `cell` owns the mailbox and is scheduled when it must run.
    func send(_ message: Message, to cell: AnyActorCell) async throws(SendError<Message>) {
        let id = state.withLock { state -> UInt64 in state.nextID &+= 1; return state.nextID }
        let result: Result<Void, SendError<Message>> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                enqueueOrWait(id: id, message: message, cell: cell, continuation: continuation)
            }
        } onCancel: {
            cancel(id: id)
        }
        try result.get()
    }

    private func enqueueOrWait(id: UInt64, message: Message, cell: AnyActorCell, continuation: Continuation) {
        #if DEBUG
        BoundedMailboxWaitersTestHook.pauseIfArmed(at: .beforeLock)
        #endif
        let now: Now = state.withLock { state in
            if state.waiters.isEmpty {
                let (result, refused) = MessageEncoding<Message>.tryEnqueue(message, into: cell.queue, signalling: cell.entry)
                switch result {
                case .accepted(let first)?: return .accepted(first)
                case .closed?: return .stopped(refused!)
                case nil: break
                }
            } else if cell.queue.isClosed {
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
            // W2.
            if cell.queue.claimConsumerForWaiter(signalling: cell.entry) { cell.scheduleSelf() }
        }
    }

    /// Cancelled: hands the message back if it still waits.
    private func cancel(id: UInt64) {
        let cancelled: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            count.store(state.waiters.count, ordering: .relaxed)
            return waiter
        }
        if let cancelled { cancelled.continuation.resume(returning: .failure(.cancelled(cancelled.message!))) }
    }

    /// The turn, after draining: moves waiting messages in, oldest first, while there is
    /// room. True if the mailbox went idle → busy.
    func admit(into cell: AnyActorCell) -> Bool {
        var becameNonEmpty = false
        var resumed: [Continuation] = []
        var stopped: [Waiter] = []
        state.withLock { state in
            while !state.waiters.isEmpty {
                let (result, refused) = MessageEncoding<Message>.tryEnqueue(state.waiters[0].message!, into: cell.queue,
                                                                            signalling: cell.entry)
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

    /// Every waiter gets its message back; after the close (W4).
    func failAll() {
        let all: [Waiter] = state.withLock { state in
            defer { state.waiters = []; count.store(0, ordering: .relaxed) }
            return state.waiters
        }
        for waiter in all { waiter.continuation.resume(returning: .failure(.stopped(waiter.message!))) }
    }
}

#if DEBUG
/// Debug builds only: pauses the next sender that found the mailbox full (W2, W4 tests).
enum BoundedMailboxWaitersTestHook {
    enum Point: Equatable, Sendable {
        /// Before the lock: a stop can run to its end here.
        case beforeLock
        /// Under the lock, about to record itself.
        case beforeRecord
    }
    private static let armed = Lock<(point: Point, action: @Sendable () -> Void)?>(nil)

    /// Disarms after the next sender reaching `point` runs `action`.
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
