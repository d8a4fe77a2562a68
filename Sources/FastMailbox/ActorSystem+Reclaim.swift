// ActorSystem+Reclaim: idle actors give their mailbox ring back, each in its own next
// turn (only the consumer may): <doc:ActorCells>, "Giving rings back".

import Dispatch
import MNScheduler

extension ActorSystem {
    /// Cells per hold of the registry lock.
    static let reclaimChunk = 1_024

    /// Asks every actor whose ring took no message since the previous walk to give it back
    /// at its next turn. The system walks every `idleMailboxReclaimMilliseconds`; this
    /// walks now, on the calling thread, one walk at a time.
    /// - Returns: the number of actors asked.
    @discardableResult
    public func reclaimIdleMailboxes() -> Int {
        if isShuttingDown { return 0 }
        return ActorSystem.walkIdleMailboxes(registry: registry, walk: reclaimWalk)
    }

    /// Holds only the registry and the walk lock; stops once a shutdown began.
    static func walkIdleMailboxes(registry: FutexLock<Registry>, walk: Lock<Int>) -> Int {
        let requested = walk.withLock { walks -> Int in
            walks += 1
            var requested = 0
            var next: Int? = 0
            while let start = next {
                RingEpoch.enter()  // one section per chunk, not one per cell (RingEpoch.swift)
                next = registry.withLock { registry in
                    if registry.shuttingDown { return nil }
                    return registry.cells.forEach(from: start, limit: ActorSystem.reclaimChunk) { cell in
                        // Event or sequential, neither bounded nor eager.
                        if cell.queue.reclaimable, cell.queue.ringIdleSinceLastLook(), cell.requestMailboxRelease() {
                            requested += 1
                        }
                    }
                }
                RingEpoch.exit()
            }
            return requested
        }
        if !RingEpoch.isInSection { RingEpoch.collect() }
        return requested
    }

    /// Rings given back so far (a snapshot); each is freed after a grace period.
    public var idleMailboxRingsReleased: Int { counters.mailboxRingsReleased.load(ordering: .relaxed) }

    /// Unless the interval is 0 or the clock is virtual.
    func startIdleMailboxReclaim() {
        let milliseconds = scheduler.resolvedConfiguration.idleMailboxReclaimMilliseconds
        guard milliseconds > 0, scheduler.clock.virtual == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let interval = DispatchTimeInterval.milliseconds(milliseconds)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(max(1, milliseconds / 10)))
        // Not the system (weak would slow its retains); deinit cancels the timer.
        let registry = registry, walk = reclaimWalk
        timer.setEventHandler {
            _ = ActorSystem.walkIdleMailboxes(registry: registry, walk: walk)
            OverflowChunkPool.trimIfDue()  // pooled overflow chunks go back to malloc (MNScheduler)
        }
        reclaimTimer.withLock { $0 = timer }
        timer.activate()
    }
}
