@testable import MNScheduler

/// A scheduled unit that stores a queue whose consumer it is, its state word standing in for
/// the idle flag (MPSCQueue.swift, "The unit as the idle flag"). The tests that use it play
/// the producers and the worker.
final class QueueUnit: ScheduledUnit, @unchecked Sendable {
    let unitHeader = UnitHeader(kind: QueueUnit.unitKind)
    static let unitKind = UnitKind.register(QueueUnit.self)
    let queue: MPSCQueue
    init(shape: MPSCQueue.Shape) {
        queue = MPSCQueue(shape: shape)
    }

    /// A producer's send, signalling this unit.
    func enqueue(word: UInt) -> MPSCQueue.EnqueueResult {
        withUnsafeBytes(of: word) { queue.enqueue(moving: $0.baseAddress!, recording: UntypedItems.self, signalling: entry) }
    }

    func drain(max: Int, _ body: (UInt) -> Void) -> MPSCQueue.DrainOutcome { queue.drain(max: max, body) }

    /// A turn is running or due.
    var hasPendingWork: Bool { stateSnapshot != UnitHeader.idle }

    // The worker's transitions, driven by the test.
    func transitionToScheduled(expectingOwner: Bool) -> UnitHeader.ScheduleClaim {
        unitHeader.transitionToScheduled(expectingOwner: expectingOwner)
    }
    func transitionToRunning() -> UInt8 { unitHeader.transitionToRunning() }
    func transitionAfterTurn(_ outcome: TurnOutcome, owner: UInt8) -> UnitHeader.AfterTurn {
        unitHeader.transitionAfterTurn(outcome, owner: owner)
    }

    func runTurn(budget: Int) -> TurnOutcome { preconditionFailure("never scheduled: the test plays the worker") }
    func runAfterShutdown() {}
}
