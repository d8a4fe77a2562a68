// Worker: one OS thread of the pool. Where units run, in what order, and when it sleeps.
// The loop's steps, stalled workers and long turns are argued in
// MNScheduler.docc/SchedulerProtocols.md ("The worker loop", "Blocked workers",
// "Long turns").
//
// Each worker owns a next slot, a bounded local run queue (RunQueue) and a parker. A tick
// takes the first of: (0) every other tick at most, a task resumed from outside the pool;
// (1) when due, the injection queue; (2) the next slot, at most `maxNextStreak` times in a
// row; (3) the local queue; (4) a search: injection, stealing, a stalled worker's next
// slot; (5) parking (IdleWorkers).
//
// Invariants:
//   (N1) Exactly one taker gets each next-slot unit: every take is an exchange with nil.
//   (N2) Only the owner writes a non-nil value into its next slot.
//   (N3) Every `var` of Worker is touched only by the worker's own thread, or by
//        Scheduler.shutdown after it joined this thread.
// Ordering: the owner puts with a release store or an acq_rel exchange; every taker uses
// an acq_rel exchange. A thief's relaxed reads only decide whether to try a steal.

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
@usableFromInline
final class Worker: @unchecked Sendable {
    // @unchecked: `local` and `parker` are shared by design; the rest is confined (N3).

    /// Consecutive next-slot runs allowed before the local queue gets a turn.
    static let maxNextStreak = 3
    /// Most ticks between polls of the injection queue.
    static let injectionPollInterval: UInt32 = 61
    /// Ticks since a worker woke after which its searches go on for MN_IDLE_SEARCH_US:
    /// it has been running a stream, not a request and its reply.
    static let streamTicks: UInt32 = 16
    /// Time between two looks of the idle search.
    static let idleSearchIntervalNanoseconds: UInt64 = 16_000
    /// How long a next-slot occupant waits inside one turn before a searcher takes it.
    static let nextSlotPatienceNanoseconds: UInt64 = 5_000
    /// The longest a unit retaken from the same long turn waits.
    static let maximumRetakePatienceNanoseconds: UInt64 = 200_000

    let index: Int
    let schedulerID: Int
    /// Shared state, held strongly so hot-path accesses borrow it.
    let core: SchedulerCore
    /// The owner handle of this worker's run queue.
    let local: RunQueue
    let parker: Parker
    let throughput: Int
    let spinCount: Int
    /// The idle search's length (MN_IDLE_SEARCH_US), in nanoseconds; 0: none.
    let idleSearchNanoseconds: UInt64

    /// What other threads may see and take of this worker (see WorkerShared).
    @usableFromInline let shared: WorkerShared
    /// True for a spare thread's worker (not stolen from; retires when idle).
    let isSpare: Bool

    // Owner-only state written every turn, padded off the neighbouring Worker's lines.
    private let paddingBefore = CacheLinePadding()
    var nextStreak = 0
    var tick: UInt32 = 0
    /// The tick of the next forced poll of the injection queue (step 1).
    var injectionDue: UInt32 = Worker.injectionPollInterval
    var searching = false
    /// `tick` when this worker last came back from parking: the idle search is for a
    /// worker that ticked `streamTicks` since.
    var tickAtWake: UInt32 = 0
    /// The unit whose turn runs on this thread (for isolation checks), unretained.
    var currentUnit: UnsafeMutableRawPointer?
    /// Set (release) once the loop ended and its leftovers were handed over.
    let hasExited = Atomic<Bool>(false)
    /// Round-robin cursor for MNTaskExecutor lanes.
    var laneCursor = 0
    /// Per pool worker: what this searcher last saw in its next slot, and when ("Long turns").
    private var slotWatch: [NextSlotWatch]
    /// True when the last steal() left a watched occupant: search() keeps going.
    private var watchingNextSlot = false
    private var random: UInt64
    /// A unit taken from another worker's next slot; drains here do not linger until it idles.
    private var lingerless: UnsafeMutableRawPointer?
    /// What this worker's turns are told about lingering (LingerPermit.swift).
    private(set) var lingerPermit = LingerPermit.never
    private let paddingAfter = CacheLinePadding()

    /// A pool worker (`index` of the core) or a spare thread's worker.
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
        self.idleSearchNanoseconds = UInt64(configuration.idleSearchMicroseconds) &* 1_000
        self.random = 0x9E37_79B9_7F4A_7C15 &* UInt64(index + 1)
        self.slotWatch = [NextSlotWatch](repeating: NextSlotWatch(), count: core.shared.count)
    }

    /// The calling thread's worker, nil off-pool (a thread-local: one load).
    @inline(__always)
    static var current: Worker? {
        guard let raw = ckshim_current_worker_get() else { return nil }
        return Unmanaged<Worker>.fromOpaque(raw).takeUnretainedValue()
    }


    /// The calling thread's worker, unretained: a worker outlives every turn on its thread.
    @inline(__always)
    static var currentUnmanaged: Unmanaged<Worker>? {
        guard let raw = ckshim_current_worker_get() else { return nil }
        return Unmanaged<Worker>.fromOpaque(raw)
    }

    /// The permit this thread's worker gives its turns; `.never` off the pool (tests).
    static var currentLingerPermit: LingerPermit {
        currentUnmanaged?._withUnsafeGuaranteedRef { $0.lingerPermit } ?? .never
    }

    /// Whether a drain in a turn on this thread would linger now (tests).
    static func currentMayLinger() -> Bool {
        guard let worker = currentUnmanaged, let permitted = worker._withUnsafeGuaranteedRef({ $0.lingerPermit.worker })
        else { return false }
        return nextSlotIsEmpty(permitted) && hasNothingElseToRun(permitted)
    }

    /// True on a pool worker with nothing else to run ("Lingering"). Off the pool: false.
    static func currentHasNothingElseToRun() -> Bool {
        guard let worker = currentUnmanaged else { return false }
        return hasNothingElseToRun(worker.toOpaque())
    }

    /// True when the worker at `worker` has nothing else to run: a lingering drain's look.
    static func hasNothingElseToRun(_ worker: UnsafeMutableRawPointer) -> Bool {
        Unmanaged<Worker>.fromOpaque(worker)._withUnsafeGuaranteedRef {
            $0.nextSlot == nil && $0.local.isEmpty && $0.core.injection.isEmpty && $0.core.resumed.isEmpty
        }
    }

    /// True when the worker at `worker` has nothing in its next slot: a lingering drain's
    /// first look, one load.
    @inlinable @inline(__always)
    static func nextSlotIsEmpty(_ worker: UnsafeMutableRawPointer) -> Bool {
        Unmanaged<Worker>.fromOpaque(worker)._withUnsafeGuaranteedRef { $0.shared.nextSlot.load(ordering: .relaxed) == nil }
    }

    // MARK: the loop

    /// The owner's view of the next slot.
    @inline(__always) var nextSlot: UnsafeMutableRawPointer? { shared.nextSlot.load(ordering: .relaxed) }

    /// Metrics: one more steal (owner only).
    private func countSteal() {
        shared.steals.store(shared.steals.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Metrics: one more next slot taken from a long turn.
    private func countLongTurnSteal() {
        countSteal()
        shared.longTurnSteals.store(shared.longTurnSteals.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Takes the next slot's unit (owner).
    @inline(__always) func takeNextSlot() -> UnsafeMutableRawPointer? { shared.takeNextSlot() }

    /// `nameThread: false` for a donated thread, which keeps the process's name.
    func run(pin: Bool, nameThread: Bool = true) {
        shared.threadID.store(ckplat_thread_id(), ordering: .relaxed)
        ckshim_current_worker_set(Unmanaged.passUnretained(self).toOpaque())
        lingerPermit = ownPermit
        RingEpoch.enter()  // held while this worker runs units (RingEpoch.swift)
        defer { RingEpoch.exit(); ckshim_current_worker_set(nil); lingerPermit = .never }
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

    /// Leaving the loop: what this worker holds goes to the hand-back.
    private func handOverLeftovers() { giveAwayQueued(to: core.handOver) }

    /// Hands the next slot's unit, then every local one, to `receiver` (owner only).
    func giveAwayQueued(to receiver: (UnsafeMutableRawPointer) -> Void) {
        if let unit = takeNextSlot() { receiver(unit) }
        while let unit = local.pop() { receiver(unit) }
    }

    /// A spare thread's loop: run work while there is some; after `idleLimit` of none, retire.
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

    /// A retiring spare's units go back to the pool, or to the hand-back once closed.
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
        if tick & 1 == 0, !core.resumed.isEmpty, let unit = core.resumed.pop() {
            // Step 0. Not counted toward step 1's interval, so a due poll waits a tick.
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
            // The local queue is empty: run it on. A push-then-pop would let a thief take it.
            if local.isEmpty { return unit }
            pushLocal(unit)
            // More is queued here: let a sleeper steal it.
            if local.count > 1 { core.notifyParkedFromWorker() }
        }
        nextStreak = 0
        return local.pop()
    }

    /// Step 4: search the injection queue and the other workers, for `spinCount` rounds,
    /// then, after a stream, for the idle search's length.
    private func search() -> UnsafeMutableRawPointer? {
        if _slowPath(lingerless != nil) { lingerAgain() }  // its unit left this worker's queues
        if !searching { searching = core.idle.transitionToSearching() }
        var round = 0
        var deadline: UInt64 = 0
        while true {
            if let unit = core.resumed.pop() ?? takeFromInjection() ?? steal() {
                if searching {
                    searching = false
                    if core.idle.transitionFromSearching() { core.notifyParked() }
                }
                return unit
            }
            if core.closed.load(ordering: .relaxed) { return nil }
            if round < spinCount || watchingNextSlot {
                round += 1
                for _ in 0..<16 { ckshim_stall() }
                continue
            }
            // The idle search: after a stream only, one look per interval, no shared reads
            // in between (SchedulerProtocols.md, "The idle search").
            guard searching, idleSearchNanoseconds > 0, tick &- tickAtWake >= Worker.streamTicks else { return nil }
            let now = monotonicNanoseconds()
            if deadline == 0 {
                deadline = now &+ idleSearchNanoseconds
                shared.idleSearches.store(shared.idleSearches.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            }
            if now >= deadline { return nil }
            let next = min(now &+ Worker.idleSearchIntervalNanoseconds, deadline)
            repeat {
                for _ in 0..<16 { ckshim_stall() }
            } while monotonicNanoseconds() < next
        }
    }

    /// Step 1: takes from the injection queue; the next poll is `1 + ⌊L·W / I⌋` ticks on
    /// (L local, I injected, W workers), within 2...injectionPollInterval.
    @inline(never)
    private func pollInjection() -> UnsafeMutableRawPointer? {
        RingEpoch.refresh()  // lets the ring epoch advance past this worker
        let unit = takeFromInjection()
        let injected = Unmanaged.passUnretained(core.injection)._withUnsafeGuaranteedRef { $0.count }
        var interval = Worker.injectionPollInterval
        if injected > 0 {
            let share = local.count * core.queues.count / injected + 1
            if share < Int(interval) { interval = UInt32(max(share, 2)) }
        }
        injectionDue = tick &+ interval
        return unit
    }

    /// The oldest injected unit, plus up to 1/W of the rest into the local queue.
    private func takeFromInjection() -> UnsafeMutableRawPointer? {
        // Borrowed: a retain would write the refcount on the line every outside push reads.
        Unmanaged.passUnretained(core.injection)._withUnsafeGuaranteedRef { injection in
            var moved = false
            let first = injection.pop(extra: { left in
                min(left / core.queues.count, local.usableCapacity / 2 - local.count)
            }, into: { unit in
                pushLocal(unit)
                moved = true
            })
            if moved { core.notifyParkedFromWorker() }
            return first
        }
    }

    /// Half of another worker's local queue, victims from a random start.
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
                // A retake waits its patience.
            }
            if let unit = takeFromLongTurn(other, watch: &slotWatch[k]) { countLongTurnSteal(); takenFromNextSlot(unit); return unit }
        }
        return nil
    }

    /// `other`'s next-slot occupant if it has waited out the patience in one turn
    /// ("Long turns"); else nil, recording what this searcher saw.
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
            // A first sighting does not keep the search going (ping-pong makes one every round).
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
        // A long turn: mark the owner stalled. A stale mark only costs a wake-up or early steal.
        if other.turnCount.load(ordering: .relaxed) == turns { other.stalled.store(true, ordering: .releasing) }
        return unit
    }

    /// Step 5. Returns when woken (as a searcher) or when the scheduler closes.
    private func park() {
        shared.parks.store(shared.parks.load(ordering: .relaxed) &+ 1, ordering: .relaxed)  // metrics, owner only
        let wasSearching = searching
        searching = false
        if core.idle.transitionToParked(worker: index, isSearching: wasSearching) {
            // Last searcher: IdleWorkers W2.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if core.hasQueuedWork() { core.notifyParked() }
        }
        RingEpoch.exit()
        RingEpoch.refresh()  // depth 0: collects, handing retired rings over in batches
        defer { RingEpoch.enter() }
        while true {
            parker.park()
            if core.closed.load(ordering: .acquiring) { return }
            if !core.idle.isParked(worker: index) {
                searching = true  // the waker counted us as searching (W1)
                tickAtWake = tick
                return
            }
        }
    }

    // MARK: running and queueing

    /// Runs one turn: keeps L1 and L3 (entry retained iff no owner; after a T4 that read O
    /// set, only the raw pointer is used).
    @inline(__always)
    private func runUnit(_ pointer: UnsafeMutableRawPointer) {
        let header = UnitHeader.at(pointer)
        let throughput = self.throughput
        currentUnit = pointer
        shared.turnCount.store(shared.turnCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)  // odd: in a turn
        shared.stalled.store(false, ordering: .relaxed)
        let owner = header.pointee.transitionToRunning()
        let outcome = UnitKind.runTurn(pointer, budget: throughput, lingering: lingerPermit, header: header)
        let after = header.pointee.transitionAfterTurn(outcome, owner: owner)
        shared.turnCount.store(shared.turnCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        currentUnit = nil
        switch after {
        case .requeue:
            if core.closed.load(ordering: .acquiring) { return core.handOver(pointer) }
            pushLocal(pointer)
            if nextSlot != nil || local.count > 1 { core.notifyParkedFromWorker() }
        case .idleRelease:
            if _slowPath(pointer == lingerless) { lingerAgain() }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        case .idleOwned:
            if _slowPath(pointer == lingerless) { lingerAgain() }
        }
    }

    /// Records a unit taken from another worker's next slot: drains stop lingering.
    @inline(__always)
    private func takenFromNextSlot(_ unit: UnsafeMutableRawPointer) {
        lingerless = unit
        lingerPermit = .never
    }

    /// That unit went idle or this worker ran dry: drains linger again. Out of line.
    @inline(never)
    private func lingerAgain() {
        lingerless = nil
        lingerPermit = ownPermit
    }

    /// A pool worker's permit: itself, with two or more workers; else `.never`.
    private var ownPermit: LingerPermit {
        LingerPermit(worker: core.shared.count > 1 ? Unmanaged.passUnretained(self).toOpaque() : nil)
    }

    /// schedule() from this worker's own thread: the next slot, displacing its occupant.
    @inline(__always)
    func scheduleLocal(_ unit: UnsafeMutableRawPointer) {
        local.assertOwnerThread("next-slot put")  // debug builds: this worker's thread only
        if !shared.stalled.load(ordering: .relaxed), shared.nextSlot.load(ordering: .relaxed) == nil {
            // Empty, and only this worker puts here (N2): a release store suffices.
            shared.nextSlot.store(unit, ordering: .releasing)
            return
        }
        Worker.scheduleLocalDisplacing(self, unit)  // static: a tail call
    }

    /// scheduleLocal when the slot is occupied or this worker is stalled. Out of line.
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

    /// Back of the local queue; when full, the older half and `unit` go to injection in order.
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
    /// The unit last taken from that worker's next slot, and the turn count then.
    var taken: UnsafeMutableRawPointer?
    var takenTurns: UInt = 0
    var patience: UInt64 = Worker.nextSlotPatienceNanoseconds

    /// Whether `occupant` at turn count `turns` is the unit last taken in the same turn.
    func isRetake(_ occupant: UnsafeMutableRawPointer?, turns: UInt) -> Bool {
        taken != nil && occupant == taken && turns == takenTurns
    }

    /// How long `occupant` must wait before it is taken.
    func patience(for occupant: UnsafeMutableRawPointer?, turns: UInt) -> UInt64 {
        isRetake(occupant, turns: turns) ? patience : Worker.nextSlotPatienceNanoseconds
    }

    /// Records a take: the same unit in the same turn doubles the retake patience, up to
    /// `maximumRetakePatienceNanoseconds`; anything else resets it.
    mutating func recordTake(_ unit: UnsafeMutableRawPointer, turns: UInt) {
        patience = isRetake(unit, turns: turns)
            ? min(patience &* 2, Worker.maximumRetakePatienceNanoseconds) : Worker.nextSlotPatienceNanoseconds
        taken = unit
        takenTurns = turns
    }
}

/// The part of a worker other threads touch: next slot, turn count, stalled flag (N1–N2).
@usableFromInline
final class WorkerShared: @unchecked Sendable {
    // @unchecked: every field is an Atomic (and padding).
    /// Allocated in a row: the owner's per-turn stores must not share the next worker's line.
    private let paddingBefore = CacheLinePadding()
    @usableFromInline let nextSlot = Atomic<UnsafeMutableRawPointer?>(nil)
    let turnCount = Atomic<UInt>(0)
    let stalled = Atomic<Bool>(false)
    /// Metrics, owner only: times parked, steals made.
    let parks = Atomic<Int>(0)
    let steals = Atomic<Int>(0)
    /// Of `steals`, next-slot occupants taken from a long turn.
    let longTurnSteals = Atomic<Int>(0)
    /// Idle searches begun (owner only).
    let idleSearches = Atomic<Int>(0)
    /// Metrics, monitor only: its samples, and those that found a turn running.
    let samples = Atomic<Int>(0)
    let busySamples = Atomic<Int>(0)
    /// The worker thread's id (the kernel tid on Linux; 0 until it starts), for the monitor.
    let threadID = Atomic<Int64>(0)
    private let paddingAfter = CacheLinePadding()

    /// True when the thread is running or runnable, not asleep in the kernel (false when
    /// unknown). For the monitor, on a stall only.
    func threadIsRunnable() -> Bool {
        ckplat_thread_is_runnable(threadID.load(ordering: .relaxed)) == 1
    }

    /// Takes the next slot's unit: the owner, or a thief while stalled. An exchange (N1).
    @inline(__always) func takeNextSlot() -> UnsafeMutableRawPointer? {
        if nextSlot.load(ordering: .relaxed) == nil { return nil }
        return nextSlot.exchange(nil, ordering: .acquiringAndReleasing)
    }

    /// True while a turn is running (the count is odd).
    var inTurn: Bool { turnCount.load(ordering: .relaxed) & 1 == 1 }
}
