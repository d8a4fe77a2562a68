// ActorSystem+Reclaim: idle actors give their mailbox ring back.
//
// A walk visits the registry in chunks, each under the registry lock and inside one ring
// epoch section, and asks every actor whose ring took no message since the previous walk
// to give it back (AnyActorCell.requestMailboxRelease). The actor's own next turn does it,
// if its mailbox drains empty: only the consumer may (MPSCQueue.swift, RingEpoch.swift).
// The system walks by itself every `idleMailboxReclaimMilliseconds` (0: off) on a
// Dispatch timer, never on a virtual clock. So a ring goes back between one and two
// intervals after the actor's last message. Details: FastMailbox.docc/ActorCells.md,
// "Giving rings back".

import Dispatch
import MNScheduler

extension ActorSystem {
    /// Cells visited per hold of the registry lock by a walk.
    static let reclaimChunk = 1_024

    /// Asks every actor whose mailbox holds a ring and took no message since the previous
    /// walk to give that ring back at its next turn. Its next message allocates a fresh
    /// one. The system walks by itself every
    /// `SchedulerConfiguration.idleMailboxReclaimMilliseconds` (MNScheduler); call this to
    /// walk now. An actor is asked on the second walk that finds it idle. Runs on the
    /// calling thread; spawns wait at most for one chunk of the registry. Walks run one at
    /// a time.
    /// - Returns: the number of actors asked to give their ring back.
    @discardableResult
    public func reclaimIdleMailboxes() -> Int {
        if isShuttingDown { return 0 }
        return ActorSystem.walkIdleMailboxes(registry: registry, walk: reclaimWalk)
    }

    /// The walk, on the registry and the walk lock alone: the automatic walk's timer holds
    /// these two and not the system (see `startIdleMailboxReclaim`). Stops at the first
    /// chunk that finds the registry closed by a shutdown (`Registry.shuttingDown`).
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
                        // Reclaimable: an event or sequential actor's, unless bounded or eagerly allocated.
                        if cell.reclaimable, cell.ringIdleSinceLastLook(), cell.requestMailboxRelease() {
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

    /// Mailbox rings idle actors have given back so far (a snapshot; see
    /// ``reclaimIdleMailboxes()``). A ring is freed a grace period after it is given back.
    public var idleMailboxRingsReleased: Int { counters.mailboxRingsReleased.load(ordering: .relaxed) }

    /// Starts the automatic walk (init): a Dispatch timer every
    /// `idleMailboxReclaimMilliseconds`, unless that is 0 or the clock is virtual.
    func startIdleMailboxReclaim() {
        let milliseconds = scheduler.resolvedConfiguration.idleMailboxReclaimMilliseconds
        guard milliseconds > 0, scheduler.clock.virtual == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let interval = DispatchTimeInterval.milliseconds(milliseconds)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(max(1, milliseconds / 10)))
        // The handler holds the registry and the walk lock, not the system: a weak
        // reference would give the system a side table and slow every retain of it. The
        // system's deinit cancels the timer; a handler already running then finds no cell.
        let registry = registry, walk = reclaimWalk
        timer.setEventHandler {
            _ = ActorSystem.walkIdleMailboxes(registry: registry, walk: walk)
            OverflowChunkPool.trimIfDue()  // pooled overflow chunks go back to malloc (MNScheduler)
        }
        reclaimTimer.withLock { $0 = timer }
        timer.activate()
    }
}
