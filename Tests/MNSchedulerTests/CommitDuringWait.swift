import Synchronization
@testable import MNScheduler

#if DEBUG  // every test here arms a test hook, which release builds compile out

/// Serialises the tests that arm MPSCQueueTestHook's commit wait: the hook point holds one
/// armed queue for the whole process, and unit tests run in parallel.
private let commitWaitHookInUse = Lock<Void>(())

/// A producer that has claimed `slot` (ticket `ticket`) of `queue`'s ring and commits `value`
/// at the consumer's first look for it (MPSCQueueTestHook's commit wait): a deterministic
/// stand-in for a commit that lands a few nanoseconds after the drain found nothing. Run
/// `drain` (the consumer's drain); returns its outcome and whether the commit happened
/// inside it. If it did not (the drain ended without waiting), the item is committed after
/// it, so the test can go on.
func drainWithCommitDuringWait(_ queue: borrowing MPSCQueue, slot: UnsafeMutableRawPointer, ticket: UInt32, value: UInt,
                               drain: () -> MPSCQueue.DrainOutcome) -> (outcome: MPSCQueue.DrainOutcome, waited: Bool) {
    commitWaitHookInUse.withLock { _ in
        drainWithCommitDuringWaitAlone(queue, slot: slot, ticket: ticket, value: value, drain: drain)
    }
}

private func drainWithCommitDuringWaitAlone(_ queue: borrowing MPSCQueue, slot: UnsafeMutableRawPointer, ticket: UInt32, value: UInt,
                                            drain: () -> MPSCQueue.DrainOutcome) -> (outcome: MPSCQueue.DrainOutcome, waited: Bool) {
    let committedInDrain = Atomic<Bool>(false)
    nonisolated(unsafe) let claimed = slot
    let ring = queue.ring
    MPSCQueueTestHook.armCommitWait(queue) {
        claimed.storeBytes(of: value, as: UInt.self)
        ring.publishMultiProducer(slot: claimed, ticket: ticket)
        committedInDrain.store(true, ordering: .sequentiallyConsistent)
    }
    defer { MPSCQueueTestHook.disarmCommitWait() }
    let outcome = drain()
    let waited = committedInDrain.load(ordering: .sequentiallyConsistent)
    if !waited {
        MPSCQueueTestHook.disarmCommitWait()
        slot.storeBytes(of: value, as: UInt.self)
        queue.ring.publishMultiProducer(slot: slot, ticket: ticket)
    }
    return (outcome, waited)
}
#endif
