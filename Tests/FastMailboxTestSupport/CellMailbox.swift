@testable import FastMailbox
@testable import MNScheduler

/// A typed view of a cell's inline queue with a standalone ``Mailbox``'s operations, for
/// tests that put messages into a cell or read its counts. A send here never schedules the
/// cell; a drain is the cell's consumer, so only where no turn can run.
package struct CellMailbox<Message: Sendable> {
    package let cell: AnyActorCell

    package func send(_ message: consuming Message) -> Mailbox<Message>.SendResult {
        let (result, refused) = MessageEncoding<Message>.enqueue(message, into: cell.queue)
        switch result {
        case .accepted(let first): return .accepted(becameNonEmpty: first)
        case .closed: return .closed(refused.unsafelyUnwrapped)
        }
    }

    package func drain(max: Int, _ body: (Message) -> Void) -> MPSCQueue.DrainOutcome {
        MessageEncoding<Message>.drain(cell.queue, max: max, body)
    }

    package func takeOne() -> (Message?, MPSCQueue.DrainOutcome) { MessageEncoding<Message>.takeOne(from: cell.queue) }

    package var count: Int { cell.queue.approximateCount }
    package var approximateCount: Int { cell.queue.approximateCount }
    package var dequeuedCount: Int { cell.queue.dequeuedCount }
    package var ringBytes: Int { cell.queue.ringBytes }
    package var hasRing: Bool { cell.queue.hasRing }
    package var reclaimable: Bool { cell.queue.reclaimable }
    package var overflowSendCount: Int { cell.queue.overflowAppends }
    package var overflowChunksHeld: Int { cell.queue.overflowChunksHeld }
    /// A turn is running or due (for a unit-signalling queue), or the queue's flag says so.
    package var hasPendingWork: Bool {
        cell.queue.signalsUnit ? cell.stateSnapshot != UnitHeader.idle : cell.queue.hasPendingWork
    }

    /// True when the queue lies inside the cell's own heap block: one object per actor.
    package var isInline: Bool {
        let start = UInt(bitPattern: Unmanaged.passUnretained(cell).toOpaque())
        let address = cell.queue.hookIdentity
        return address > start && address < start + UInt(heapBlockSize(of: cell))
    }
}

extension AnyActorCell {
    /// This cell's queue as a typed mailbox (`Message` must be the cell's message type).
    package func mailbox<Message: Sendable>(of _: Message.Type) -> CellMailbox<Message> { CellMailbox(cell: self) }
}

extension ActorCellBase {
    package var mailbox: CellMailbox<Message> { CellMailbox(cell: self) }
}

extension SequentialActorCell {
    package var mailbox: CellMailbox<Message> { CellMailbox(cell: self) }
}
