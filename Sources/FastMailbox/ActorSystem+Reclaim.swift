// ActorSystem+Reclaim — idle actors give their mailbox ring back (issue 9, item 6).
//
// An actor's mailbox allocates its ring (~460 bytes with 32 word slots) on its first
// message. An actor that handled a few messages and went idle would keep it for ever; the
// walk below takes it back, so an idle actor costs its cell again (the mailbox queue is the cell). How the ring
// is given back safely while senders may still hold its address (seal, detach, grace
// period) is MPSCQueue.swift's "Giving the ring back" and RingEpoch.swift; here is only
// who asks, and when:
//  - a walk (`reclaimIdleMailboxes`, one at a time) visits the registry's cells in chunks
//    of `reclaimChunk`, each under the registry lock, inside one ring epoch section per
//    chunk. For each actor (event or sequential) whose mailbox has a ring and took no message since the
//    previous walk (the queue compares its taken count with the walker's snapshot, a word
//    in the ring block only the walker touches), it asks for a release: it installs the
//    *release request* word in the cell's system slot (AnyActorCell.requestMailboxRelease,
//    a CAS from nil) and schedules the cell; a cell whose slot holds a system queue
//    (watched, a parent, observed) gets `SystemMessage.releaseMailboxRing` in that queue
//    instead; a cell with a pending stop is left alone. No registration, nothing per
//    message.
//  - a sequential actor's turn takes the request likewise and passes it to its body, which
//    gives the ring back before it next parks (SequentialActorCell, "Giving the ring back");
//  - either way an event actor's `hasSystemWork` is true and the cell's next turn is the general one (the
//    fast turn pays nothing: it already tests hasSystemWork). The general turn takes the
//    word or the message (drainSystem(releaseRequested:); a request drained anywhere else,
//    mid-turn, is dropped and the next walk asks again), drains as usual, and if the drain
//    ended `.empty` (and the actor is running) calls `releaseIdleRing()` — the mailbox's
//    only consumer, in its own turn.
//  - the system walks by itself every `idleMailboxReclaimMilliseconds`
//    (SchedulerConfiguration, MN_IDLE_MAILBOX_RECLAIM_MS, default 10,000 ms, 0: off; a walk
//    costs ~100–200 ns per live actor, see defaultIdleMailboxReclaimMilliseconds) on a
//    Dispatch timer (the global queue's threads, as AskTimer: no thread of its own), not
//    on a virtual clock (deterministic tests call the walk themselves). After each walk
//    it collects retired rings whose grace period is over (RingEpoch.collect).
// So a ring is given back between one and two intervals after the actor's last message.

import Dispatch
import MNScheduler

extension ActorSystem {
    /// Cells visited per hold of the registry lock by a walk.
    static let reclaimChunk = 1_024

    /// Asks every actor (event or sequential) whose mailbox holds a ring and took no message since the
    /// previous walk to give that ring back at its next turn (a turn with nothing to do
    /// then frees the ring; the actor's next message allocates a fresh one). The system
    /// walks by itself every `SchedulerConfiguration.idleMailboxReclaimMilliseconds` (MNScheduler)
    /// (default ten seconds); call this to walk now — an actor is asked on the second walk
    /// that finds it idle. Runs on the calling thread; spawns wait at most for one chunk of
    /// the registry. Walks run one at a time.
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
                        // The cell's own mailbox queue (reclaimable: an event or sequential actor's, unless bounded or eagerly allocated).
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
        // reference to the system would give it a side table, and every retain and
        // release of the system (each spawn's cell takes one) would then take the
        // runtime's slow path (swift_retain → incrementSlow, an atomic on the side table:
        // ~12 % of a spawn's samples). The system's deinit cancels the timer; a handler
        // already running then walks a registry that holds no cell (a registered cell
        // keeps its system alive), and does nothing.
        let registry = registry, walk = reclaimWalk
        timer.setEventHandler {
            _ = ActorSystem.walkIdleMailboxes(registry: registry, walk: walk)
            OverflowChunkPool.trimIfDue()  // pooled overflow chunks go back to malloc (MNScheduler)
        }
        reclaimTimer.withLock { $0 = timer }
        timer.activate()
    }
}
