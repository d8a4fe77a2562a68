// Worker: one OS thread of the pool. Where units run, in what order, and when it sleeps.
// The rules and their reasons: MNScheduler.docc/SchedulerProtocols.md ("The worker loop",
// "Blocked workers", "Long turns").
//
// Each worker owns a next slot, a bounded local run queue (RunQueue) and a parker. A tick
// takes the first of: (0) every other tick at most, a task resumed from outside the pool;
// (1) when due, the injection queue, polled more often the more it holds; (2) the next
// slot, at most `maxNextStreak` times in a row while the local queue holds anything;
// (3) the local queue; (4) a search: injection, stealing half of another worker's queue,
// a stalled worker's next slot or one waiting out a long turn; (5) parking (IdleWorkers).
//
// A worker is *stalled* inside `blocking {}`, or in a turn the monitor saw run long, or
// once a thief took its next-slot occupant from a long turn. Its next slot is then
// stealable, and a sleeper or a spare (mn-blocking-N) runs its work. The owner clears the
// mark at its next turn. A unit taken from another worker's next slot drains without
// lingering until it goes idle.
//
// Invariants:
//   (N1) Exactly one taker gets each next-slot unit: every take is an exchange with nil.
//   (N2) Only the owner writes a non-nil value into its next slot.
//   (N3) Every `var` of Worker is touched only by the worker's own thread, or by
//        Scheduler.shutdown after it joined this thread (the join orders the accesses).
// Ordering (x86 and ARM): the owner puts with a release store or an acq_rel exchange;
// every taker uses an acq_rel exchange and so sees what was written before the put. A
// thief's relaxed reads of `stalled`, the turn count and the occupant only decide whether
// to try: a stale one delays or wastes a steal, never duplicates or loses a unit.

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif


/// One worker thread's state. See the file comment.
final class Worker: @unchecked Sendable {
    // @unchecked: `local` and `parker` are shared by design (lock-free ring, futex word);
    // every other mutable field is confined to the worker's own thread (N3).

    /// Consecutive next-slot runs allowed before the local queue gets a turn.
    static let maxNextStreak = 3
    /// Most ticks between polls of the injection queue (fewer while it holds units: step 1).
    static let injectionPollInterval: UInt32 = 61
    /// How long a searcher watches another worker's next-slot occupant wait inside one turn
    /// before taking it ("Long turns").
    static let nextSlotPatienceNanoseconds: UInt64 = 5_000
    /// The longest a unit retaken from the same long turn waits ("Long turns").
    static let maximumRetakePatienceNanoseconds: UInt64 = 200_000

    let index: Int
    let schedulerID: Int
    /// Shared state, held strongly so hot-path accesses borrow it (see SchedulerCore).
    let core: SchedulerCore
    /// The owner handle of this worker's run queue (push, pop: this thread only).
    let local: RunQueue
    let parker: Parker
    let throughput: Int
    let spinCount: Int

    /// What other threads may see and take of this worker (next slot, turn count, stalled
    /// flag); held by the core too, for the monitor and thieves (see WorkerShared).
    let shared: WorkerShared
    /// True for a spare thread's worker (not in the stealing ring; retires when idle).
    let isSpare: Bool

    // Owner-thread-only state, written on every turn: padded off the neighbouring Worker's
    // lines (Workers are allocated in a row; CacheLinePadding).
    private let paddingBefore = CacheLinePadding()
    var nextStreak = 0
    var tick: UInt32 = 0
    /// The tick of the next forced poll of the injection queue (step 1; `pollInjection`).
    /// `tick` moves by exactly one per localWork, so it meets this value.
    var injectionDue: UInt32 = Worker.injectionPollInterval
    var searching = false
    /// The unit whose turn is running on this thread (for isolation checks), unretained.
    var currentUnit: UnsafeMutableRawPointer?
    /// Set (release) when the loop has ended and the leftovers were handed over; shutdown
    /// joins only exited workers.
    let hasExited = Atomic<Bool>(false)
    /// Round-robin cursor for MNTaskExecutor lane choice from this worker.
    var laneCursor = 0
    /// Per pool worker: the turn count and next-slot occupant this worker last saw there
    /// while searching, and when it first saw that pair ("Long turns").
    private var slotWatch: [NextSlotWatch]
    /// True when the last steal() left a watched occupant that may become due: search()
    /// then keeps going past `spinCount` instead of parking.
    private var watchingNextSlot = false
    private var random: UInt64
    /// The unit this worker took from another worker's next slot, until it goes idle here
    /// or this worker runs out of work. Drains here do not linger meanwhile.
    private var lingerless: UnsafeMutableRawPointer?
    private let paddingAfter = CacheLinePadding()

    /// A pool worker (`index` of the core) or a spare thread's worker (with queue, parker
    /// and shared part of its own).
    init(index: Int, schedulerID: Int, core: SchedulerCore, configuration: ResolvedSchedulerConfiguration,
         isSpare: Bool = false) {
        self.index = index
        self.schedulerID = schedulerID
        self.core = core
        self.isSpare = isSpare
        if isSpare {
            self.local = RunQueue(capacity: configuration.runQueueCapacity)
        } else {
            self.local = RunQueue(owning: core.queues[index])
        }
        self.parker = isSpare ? Parker() : core.parkers[index]
        self.shared = isSpare ? WorkerShared() : core.shared[index]
        self.throughput = configuration.throughput
        self.spinCount = configuration.spinCount
        self.random = 0x9E37_79B9_7F4A_7C15 &* UInt64(index + 1)
        self.slotWatch = [NextSlotWatch](repeating: NextSlotWatch(), count: core.shared.count)
    }

    /// The calling thread's worker, nil off-pool (ckshim.h's thread-local, set by run and
    /// runSpare: one load, no call).
    @inline(__always)
    static var current: Worker? {
        guard let raw = ckshim_current_worker_get() else { return nil }
        return Unmanaged<Worker>.fromOpaque(raw).takeUnretainedValue()
    }


    /// The calling thread's worker without a retain (hot paths: schedule, executors).
    /// Valid for the whole call: a worker outlives every turn run on its thread.
    @inline(__always)
    static var currentUnmanaged: Unmanaged<Worker>? {
        guard let raw = ckshim_current_worker_get() else { return nil }
        return Unmanaged<Worker>.fromOpaque(raw)
    }

    /// Whether a mailbox drain on this thread would linger now: the thread may linger
    /// (ckshim_linger_get(), set by `run`) and has nothing else to run. Used by tests;
    /// the drain makes the two tests itself.
    static func currentMayLinger() -> Bool { ckshim_linger_get() != nil && currentHasNothingElseToRun() }

    /// True on a pool worker whose next slot, local queue, the injection queue and the
    /// resumed queue are empty ("Lingering"). Off the pool: false.
    static func currentHasNothingElseToRun() -> Bool {
        guard let worker = currentUnmanaged else { return false }
        return worker._withUnsafeGuaranteedRef {
            $0.nextSlot == nil && $0.local.isEmpty && $0.core.injection.isEmpty && $0.core.resumed.isEmpty
        }
    }

    // MARK: the loop

    /// The owner's view of the next slot (a relaxed load: only the owner puts units there).
    @inline(__always) var nextSlot: UnsafeMutableRawPointer? { shared.nextSlot.load(ordering: .relaxed) }

    /// Metrics: one more successful steal (owner only: a relaxed load and store).
    private func countSteal() {
        shared.steals.store(shared.steals.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Metrics: one more next slot taken from a long turn (also counted in `steals`).
    private func countLongTurnSteal() {
        countSteal()
        shared.longTurnSteals.store(shared.longTurnSteals.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Takes the next slot's unit (owner).
    @inline(__always) func takeNextSlot() -> UnsafeMutableRawPointer? { shared.takeNextSlot() }

    /// `nameThread: false` for a donated thread (the main thread keeps its name: it is the
    /// process's name in `ps`).
    func run(pin: Bool, nameThread: Bool = true) {
        shared.threadID.store(ckplat_thread_id(), ordering: .relaxed)
        ckshim_current_worker_set(Unmanaged.passUnretained(self).toOpaque())
        // With two or more workers, drains on this thread may linger ("Lingering").
        ckshim_linger_set(lingerSlot)
        RingEpoch.enter()  // held while this worker runs units (RingEpoch.swift)
        defer { RingEpoch.exit(); ckshim_current_worker_set(nil); ckshim_linger_set(nil) }
        if nameThread { _ = ckplat_set_thread_name("mn-worker-\(index)") }
        if pin {
            let count = Int(ckplat_affinity_cpu_count())
            if count > 0 {
                let cpu = ckplat_affinity_nth_cpu(Int32(index % count))
                if cpu >= 0 { _ = ckplat_pin_current_thread(cpu) }
            }
        }
        while !core.closed.load(ordering: .acquiring) {
            if let unit = localWork() {
                runUnit(unit)
            } else if let unit = search() {
                runUnit(unit)
            } else if !core.closed.load(ordering: .acquiring) {
                park()
            }
        }
        handOverLeftovers()
        hasExited.store(true, ordering: .releasing)
        core.exitedWorkers.wrappingAdd(1, ordering: .releasing)
    }

    /// Leaving the loop: what this worker still holds goes to the hand-back.
    private func handOverLeftovers() { giveAwayQueued(to: core.handOver) }

    /// Hands the next slot's unit, then every local one, to `receiver` (owner only).
    func giveAwayQueued(to receiver: (UnsafeMutableRawPointer) -> Void) {
        if let unit = takeNextSlot() { receiver(unit) }
        while let unit = local.pop() { receiver(unit) }
    }

    /// A spare thread's loop: run queued work while there is some; after `idleLimit` of
    /// none, retire, handing what it holds back to the pool.
    func runSpare(idleLimit: UInt64) {
        ckshim_current_worker_set(Unmanaged.passUnretained(self).toOpaque())
        defer { ckshim_current_worker_set(nil) }
        _ = ckplat_set_thread_name("mn-blocking-\(index - core.queues.count)")
        var idleSince: UInt64 = 0
        while !core.closed.load(ordering: .acquiring) {
            if let unit = localWork() ?? core.resumed.pop() ?? takeFromInjection() ?? steal() {
                idleSince = 0
                RingEpoch.enter()  // a spare holds a section per unit (RingEpoch.swift)
                runUnit(unit)
                RingEpoch.exit()
                continue
            }
            let now = monotonicNanoseconds()
            if idleSince == 0 { idleSince = now } else if now - idleSince >= idleLimit { break }
            usleep(200)
        }
        giveAwayQueued(to: retireHandOver)
        local.deallocate()
    }

    /// A retiring spare's units go back to the pool (or to the hand-back once closed).
    private func retireHandOver(_ unit: UnsafeMutableRawPointer) {
        if core.closed.load(ordering: .acquiring) {
            core.handOver(unit)
        } else {
            core.injection.push(unit)
            core.notifyParked()
        }
    }

    /// Steps 0–3 of the loop.
    @inline(__always)
    private func localWork() -> UnsafeMutableRawPointer? {
        let tick = self.tick &+ 1  // a local: one load of the field per tick, not two
        self.tick = tick
        // isEmpty first: two loads, cheaper than a pop that finds nothing.
        if tick & 1 == 0, !core.resumed.isEmpty, let unit = core.resumed.pop() {
            // Step 0. This tick does not count toward step 1's interval (so a due poll
            // waits a tick, never a wrap).
            injectionDue &+= 1
            return unit
        }
        if tick == injectionDue, let unit = pollInjection() {
            return unit  // step 1: outside work gets its share of the turns
        }
        if let unit = takeNextSlot() {
            if nextStreak < Worker.maxNextStreak {
                nextStreak &+= 1
                return unit
            }
            // Local queue empty: run it on, the streak stays at its maximum. A push-then-pop
            // would let a searching worker steal it in between.
            if local.isEmpty { return unit }
            pushLocal(unit)
            // More than what this worker runs next is queued here: let a sleeper steal it.
            if local.count > 1 { core.notifyParkedFromWorker() }
        }
        nextStreak = 0
        return local.pop()
    }

    /// Step 4: search the injection queue and the other workers, spinning `spinCount` rounds.
    private func search() -> UnsafeMutableRawPointer? {
        if _slowPath(lingerless != nil) { lingerAgain() }  // its unit left this worker's queues
        if !searching { searching = core.idle.transitionToSearching() }
        var round = 0
        while true {
            if let unit = core.resumed.pop() ?? takeFromInjection() ?? steal() {
                if searching {
                    searching = false
                    if core.idle.transitionFromSearching() { core.notifyParked() }
                }
                return unit
            }
            if (round >= spinCount && !watchingNextSlot) || core.closed.load(ordering: .relaxed) { return nil }
            round += 1
            for _ in 0..<16 { ckshim_stall() }
        }
    }

    /// Step 1: takes from the injection queue, then sets the next poll `1 + ⌊L·W / I⌋`
    /// ticks on (L local, I injected, W workers), within 2...injectionPollInterval.
    @inline(never)
    private func pollInjection() -> UnsafeMutableRawPointer? {
        RingEpoch.refresh()  // lets the ring epoch advance past this worker
        let unit = takeFromInjection()
        // Borrowed, as in takeFromInjection: no retain and release around the read.
        let injected = Unmanaged.passUnretained(core.injection)._withUnsafeGuaranteedRef { $0.count }
        var interval = Worker.injectionPollInterval
        if injected > 0 {
            let share = local.count * core.queues.count / injected + 1
            if share < Int(interval) { interval = UInt32(max(share, 2)) }
        }
        injectionDue = tick &+ interval
        return unit
    }

    /// The oldest injected unit, plus a batch of up to 1/W of the rest into the local queue.
    private func takeFromInjection() -> UnsafeMutableRawPointer? {
        // Borrowed (the core holds it for the scheduler's life): a retain and release per
        // call would write the queue's reference count, on the line every outside push reads.
        Unmanaged.passUnretained(core.injection)._withUnsafeGuaranteedRef { injection in
            guard let first = injection.pop() else { return nil }
            let batch = min(injection.count / core.queues.count, local.usableCapacity / 2 - local.count)
            var moved = 0
            while moved < batch, let unit = injection.pop() {
                pushLocal(unit)
                moved += 1
            }
            if moved > 0 { core.notifyParkedFromWorker() }
            return first
        }
    }

    /// Half of some other worker's local queue, victims from a random start.
    private func steal() -> UnsafeMutableRawPointer? {
        let queues = core.queues
        let n = queues.count
        guard n > 1 || isSpare else { return nil }
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let start = Int(random % UInt64(n))
        for k in 0..<n {
            let victim = (start + k) % n
            if victim == index { continue }
            if let unit = queues[victim].stealHalf(into: local) { countSteal(); return unit }
        }
        // A stalled worker's next slot, or one whose occupant has waited out a long turn.
        watchingNextSlot = false
        let others = core.shared
        for k in others.indices where others[k] !== shared {
            let other = others[k]
            if other.stalled.load(ordering: .relaxed) {
                let turns = other.turnCount.load(ordering: .relaxed)
                if !slotWatch[k].isRetake(other.nextSlot.load(ordering: .relaxed), turns: turns) {
                    if let unit = other.takeNextSlot() {
                        slotWatch[k].recordTake(unit, turns: turns)
                        countSteal()
                        takenFromNextSlot(unit)
                        return unit
                    }
                    continue
                }
                // A retake: it waits its patience, as a long turn's occupant (below).
            }
            if let unit = takeFromLongTurn(other, watch: &slotWatch[k]) { countLongTurnSteal(); takenFromNextSlot(unit); return unit }
        }
        return nil
    }

    /// `other`'s next-slot occupant if it has waited inside one turn for the patience
    /// ("Long turns"); else nil, updating what this searcher saw.
    @inline(__always)
    private func takeFromLongTurn(_ other: WorkerShared, watch: inout NextSlotWatch) -> UnsafeMutableRawPointer? {
        let occupant = other.nextSlot.load(ordering: .relaxed)
        let turns = other.turnCount.load(ordering: .relaxed)
        guard let occupant, turns & 1 == 1 else {
            watch.occupant = nil
            return nil
        }
        let now = monotonicNanoseconds()
        guard watch.occupant == occupant, watch.turns == turns else {
            // A first sighting does not keep the search going: with short turns (ping-pong)
            // there is a new one every round, and the searcher must still park.
            watch.turns = turns
            watch.occupant = occupant
            watch.since = now
            return nil
        }
        guard now &- watch.since >= watch.patience(for: occupant, turns: turns) else {
            watchingNextSlot = true  // the same turn outlasted a round: wait for it to be due
            return nil
        }
        watch.occupant = nil
        guard let unit = other.takeNextSlot() else { return nil }
        watch.recordTake(unit, turns: turns)
        // Proof of a long turn: mark the owner stalled. A turn that ended meanwhile makes
        // the mark stale, which only costs a wake-up or an early steal.
        if other.turnCount.load(ordering: .relaxed) == turns { other.stalled.store(true, ordering: .releasing) }
        return unit
    }

    /// Step 5. Returns when woken (as a searcher) or when the scheduler closes.
    private func park() {
        shared.parks.store(shared.parks.load(ordering: .relaxed) &+ 1, ordering: .relaxed)  // metrics, owner only
        let wasSearching = searching
        searching = false
        if core.idle.transitionToParked(worker: index, isSearching: wasSearching) {
            // Last searcher: Dekker's second half (IdleWorkers W2).
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if core.hasQueuedWork() { core.notifyParked() }
        }
        // No section while asleep; what was retired is freed if it can be.
        RingEpoch.exit()
        RingEpoch.collect()
        defer { RingEpoch.enter() }
        while true {
            parker.park()
            if core.closed.load(ordering: .acquiring) { return }
            if !core.idle.isParked(worker: index) {
                searching = true  // the waker counted us as searching (W1)
                return
            }
        }
    }

    // MARK: running and queueing

    /// Runs one turn. The entry popped is retained iff the unit has no owner (L1). T5
    /// re-queues it as it is; after T4 it is released iff T4 read O clear (L3). After a T4
    /// that read O set the unit is not touched again: only the raw pointer is used.
    @inline(__always)
    private func runUnit(_ pointer: UnsafeMutableRawPointer) {
        let unit = Unmanaged<ScheduledUnit>.fromOpaque(pointer)
        let throughput = self.throughput
        currentUnit = pointer
        shared.turnCount.store(shared.turnCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)  // odd: in a turn
        // Clears a stalled mark: a plain store beside the turn count, no load and test.
        shared.stalled.store(false, ordering: .relaxed)
        let after = unit._withUnsafeGuaranteedRef { unit -> ScheduledUnit.AfterTurn in
            let owner = unit.transitionToRunning()
            return unit.transitionAfterTurn(unit.runTurn(budget: throughput), owner: owner)
        }
        shared.turnCount.store(shared.turnCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        currentUnit = nil
        switch after {
        case .requeue:
            if core.closed.load(ordering: .acquiring) { return core.handOver(pointer) }
            pushLocal(pointer)
            if nextSlot != nil || local.count > 1 { core.notifyParkedFromWorker() }
        case .idleRelease:
            if _slowPath(pointer == lingerless) { lingerAgain() }
            unit.release()
        case .idleOwned:
            // Idle with its owner's retain: none of this worker's business any more.
            if _slowPath(pointer == lingerless) { lingerAgain() }
        }
    }

    /// A unit taken from another worker's next slot: until it goes idle here, this thread's
    /// drains do not linger ("Long turns"). Owner only.
    @inline(__always)
    private func takenFromNextSlot(_ unit: UnsafeMutableRawPointer) {
        lingerless = unit
        ckshim_linger_set(nil)
    }

    /// The unit `takenFromNextSlot` recorded went idle, or this worker found its queues empty
    /// (a thief took it back): drains linger again. Out of line: the turn's path only compares.
    @inline(never)
    private func lingerAgain() {
        lingerless = nil
        ckshim_linger_set(lingerSlot)
    }

    /// What a pool worker's linger thread-local holds while drains may linger: its
    /// WorkerShared with two or more workers, else nil.
    private var lingerSlot: UnsafeMutableRawPointer? {
        core.shared.count > 1 ? Unmanaged.passUnretained(shared).toOpaque() : nil
    }

    /// schedule() from this worker's own thread: the next slot, displacing its occupant.
    /// Wakes a sleeper only for work another worker should take.
    @inline(__always)
    func scheduleLocal(_ unit: UnsafeMutableRawPointer) {
        local.assertOwnerThread("next-slot put")  // debug builds: this worker's thread only
        if !shared.stalled.load(ordering: .relaxed), shared.nextSlot.load(ordering: .relaxed) == nil {
            // Empty, and only this worker puts units here (N2): a release store suffices.
            shared.nextSlot.store(unit, ordering: .releasing)
            return
        }
        Worker.scheduleLocalDisplacing(self, unit)  // static: a tail call
    }

    /// scheduleLocal when the slot is occupied or this worker is stalled. Out of line.
    /// Re-reads `stalled`: a thief setting it meanwhile only adds a wake-up.
    @inline(never)
    private static func scheduleLocalDisplacing(_ worker: Worker, _ unit: UnsafeMutableRawPointer) {
        worker.scheduleLocalDisplacing(unit)
    }

    @inline(__always)
    private func scheduleLocalDisplacing(_ unit: UnsafeMutableRawPointer) {
        let stalled = shared.stalled.load(ordering: .relaxed)
        let previous = shared.nextSlot.exchange(unit, ordering: .acquiringAndReleasing)
        if let previous { pushLocal(previous) }
        if previous != nil || stalled { core.notifyParkedFromWorker() }
    }

    /// Back of the local queue; when full, the older half and `unit` go to the injection
    /// queue in order.
    @inline(__always)
    func pushLocal(_ unit: UnsafeMutableRawPointer) {
        if local.push(unit) { return }
        overflow(unit)
    }

    @inline(never)
    private func overflow(_ unit: UnsafeMutableRawPointer) {
        var batch: [UnsafeMutableRawPointer] = []
        let half = local.usableCapacity / 2
        batch.reserveCapacity(half + 1)
        while batch.count < half, let older = local.pop() { batch.append(older) }
        batch.append(unit)
        core.injection.push(contentsOf: batch)
        core.notifyParkedFromWorker()
    }
}

/// What a searcher last saw in another worker's next slot (Worker.takeFromLongTurn).
struct NextSlotWatch {
    var turns: UInt = 0
    var occupant: UnsafeMutableRawPointer?
    var since: UInt64 = 0
    /// The unit this searcher last took from that worker's next slot, and the owner's turn
    /// count then: the same unit back in the same long turn waits `patience` again, doubled
    /// per such retake.
    var taken: UnsafeMutableRawPointer?
    var takenTurns: UInt = 0
    var patience: UInt64 = Worker.nextSlotPatienceNanoseconds

    /// Whether `occupant`, seen in that worker's next slot at turn count `turns`, is the
    /// unit last taken from it in the same turn.
    func isRetake(_ occupant: UnsafeMutableRawPointer?, turns: UInt) -> Bool {
        taken != nil && occupant == taken && turns == takenTurns
    }

    /// How long `occupant` must have waited before it is taken: the retake patience for
    /// the unit last taken in the same turn, else `nextSlotPatienceNanoseconds`.
    func patience(for occupant: UnsafeMutableRawPointer?, turns: UInt) -> UInt64 {
        isRetake(occupant, turns: turns) ? patience : Worker.nextSlotPatienceNanoseconds
    }

    /// Records a take of `unit` at turn count `turns`: the same unit again in the same
    /// turn doubles the retake patience (up to `maximumRetakePatienceNanoseconds`);
    /// anything else starts it again from `nextSlotPatienceNanoseconds`.
    mutating func recordTake(_ unit: UnsafeMutableRawPointer, turns: UInt) {
        patience = isRetake(unit, turns: turns)
            ? min(patience &* 2, Worker.maximumRetakePatienceNanoseconds) : Worker.nextSlotPatienceNanoseconds
        taken = unit
        takenTurns = turns
    }
}

/// The part of a worker other threads touch: its next slot (stealable while it is stalled,
/// or when its occupant waits out a long turn), its turn count and its stalled flag.
/// References neither SchedulerCore nor the Worker. Protocol: Worker.swift, N1–N2.
@usableFromInline
final class WorkerShared: @unchecked Sendable {
    // @unchecked: every field is an Atomic (and padding).
    /// One per worker, allocated in a row: the owner's per-turn stores (turnCount, nextSlot)
    /// must not share a line with the next worker's (CacheLinePadding).
    private let paddingBefore = CacheLinePadding()
    @usableFromInline let nextSlot = Atomic<UnsafeMutableRawPointer?>(nil)
    let turnCount = Atomic<UInt>(0)
    let stalled = Atomic<Bool>(false)
    /// Metrics, written by the owner only (relaxed load+store): times parked, steals made.
    let parks = Atomic<Int>(0)
    let steals = Atomic<Int>(0)
    /// Of `steals`, next-slot occupants taken from a long turn.
    let longTurnSteals = Atomic<Int>(0)
    /// Metrics, written by the monitor only: its samples, and those that found a turn running.
    let samples = Atomic<Int>(0)
    let busySamples = Atomic<Int>(0)
    /// The worker thread's id (the kernel tid on Linux; 0 until its loop starts), for the
    /// monitor.
    let threadID = Atomic<Int64>(0)
    private let paddingAfter = CacheLinePadding()

    /// True when the worker's thread is running or waiting for a CPU, not asleep in the
    /// kernel; false when it sleeps or the platform cannot tell. For the monitor, on a
    /// stall only (a file read on Linux).
    func threadIsRunnable() -> Bool {
        ckplat_thread_is_runnable(threadID.load(ordering: .relaxed)) == 1
    }

    /// Whether the worker whose WorkerShared is `shared` (the calling thread's own, from
    /// ckshim_linger_get()) has nothing in its next slot: a lingering drain's inline look.
    @inlinable @inline(__always)
    static func nextSlotIsEmpty(_ shared: UnsafeMutableRawPointer) -> Bool {
        Unmanaged<WorkerShared>.fromOpaque(shared)._withUnsafeGuaranteedRef { $0.nextSlot.load(ordering: .relaxed) == nil }
    }

    /// Takes the next slot's unit: the owner, or a thief while the owner is stalled. An
    /// exchange, so exactly one taker gets a unit.
    @inline(__always) func takeNextSlot() -> UnsafeMutableRawPointer? {
        if nextSlot.load(ordering: .relaxed) == nil { return nil }
        return nextSlot.exchange(nil, ordering: .acquiringAndReleasing)
    }

    /// True while a turn is running (the count is odd).
    var inTurn: Bool { turnCount.load(ordering: .relaxed) & 1 == 1 }
}
