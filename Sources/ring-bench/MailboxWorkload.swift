// mailbox: P producer threads → one FastMailbox Mailbox drained by one thread, beside a
// raw ck_ring (ck's in-order multi-producer enqueue, yielding while it waits for an earlier
// producer, retrying when full). Mailbox.send never blocks: a full ring overflows, in
// order, into a locked list. Checked by QueueDriver (count, sum, exact per-producer order).
// Extras: the share of sends that took the overflow, which tells the row's regime.
import FastMailbox
import MNScheduler

enum MailboxWorkload {
    static func run(_ cell: Cell) -> RunOutcome {
        let producers = cell.variant.parameter
        let each = max(cell.size / producers, 1)
        let capacity = cell.capacity ?? 1024
        switch cell.runtime {
        case .fastmailbox:
            let mailbox = try! Mailbox<UInt>(capacity: capacity)
            var outcome = QueueDriver.run(producers: producers, consumers: 1, each: each, produce: { word in
                _ = mailbox.send(word)
            }, take: { batch in
                _ = mailbox.drain(max: 64) { batch.append($0) }
            })
            if outcome.failure == nil {
                outcome.extras["overflow_percent"] = 100 * Double(mailbox.overflowSendCount) / Double(producers * each)
            }
            return outcome
        case .ckRing:
            let ring = RawRing(capacity: capacity)
            let handle = RingHandle(ring: ring)
            let outcome = QueueDriver.run(producers: producers, consumers: 1, each: each, produce: { word in
                var backoff = Backoff()
                while !handle.ring.enqueueMultiProducerYielding(word: word) { backoff.pause() }
            }, take: { batch in
                var word: UInt = 0
                while batch.count < 64, handle.ring.dequeueSingleConsumer(word: &word) { batch.append(word) }
            })
            // A run that timed out leaves its threads on the ring: leak it rather than free it.
            if !QueueDriver.leftThreadsRunning(outcome) { ring.deallocate() }
            return outcome
        default:
            return .failed("mailbox has no \(cell.runtime) implementation")
        }
    }
}
