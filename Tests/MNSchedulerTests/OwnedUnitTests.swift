// The owner bit and run-queue entries without a retain (UnitHeader.swift, "Lifetime",
// L1–L4): a unit whose owner holds its retain is scheduled and run many times from
// several threads without any retain of its own, then the owner leaves while the unit is
// idle, queued, running, or from inside its own turn (an actor's final turn); it is
// deinitialised exactly once, after its last turn. Races are made deterministic with
// semaphores (a turn held open, a worker kept busy by another unit); nothing is timed.

import Synchronization
import FastMailboxTestKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import MNScheduler
import TestSupport

/// What happened to one OwnedUnit, kept outside it so it can be read after its deinit.
final class UnitBooks: @unchecked Sendable {
    let pending = Atomic<Int>(0)
    let processed = Atomic<Int>(0)
    let turnsEnded = Atomic<Int>(0)
    let deinits = Atomic<Int>(0)
    /// turnsEnded as the deinit saw it (-1: no deinit yet).
    let turnsAtDeinit = Atomic<Int>(-1)
    /// Turns that started after the deinit (a use after free, if the memory survived).
    let turnsAfterDeinit = Atomic<Int>(0)
    let inTurn = Atomic<Bool>(false)
    let deinitDuringTurn = Atomic<Int>(0)
}

/// A mailbox-like unit whose owner (the test) may hold its retain (O set), with a deinit
/// counter and optional hooks inside the turn.
final class OwnedUnit: ScheduledUnit, @unchecked Sendable {
    let unitHeader = UnitHeader(kind: OwnedUnit.unitKind)
    static let unitKind = UnitKind.register(OwnedUnit.self)
    let books: UnitBooks
    /// Called at the start of every turn (test hook: hold the turn open, leave as owner).
    let hook: (@Sendable (OwnedUnit) -> Void)?

    init(books: UnitBooks, hook: (@Sendable (OwnedUnit) -> Void)? = nil) {
        self.books = books
        self.hook = hook
    }

    deinit {
        books.turnsAtDeinit.store(books.turnsEnded.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        if books.inTurn.load(ordering: .sequentiallyConsistent) { books.deinitDuringTurn.wrappingAdd(1, ordering: .sequentiallyConsistent) }
        books.deinits.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    func send(via scheduler: Scheduler, owned: Bool) {
        books.pending.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if owned { scheduler.schedule(self, guessing: GuessOwner.self) } else { scheduler.schedule(self) }
    }

    func runTurn(budget: Int) -> TurnOutcome {
        if books.deinits.load(ordering: .sequentiallyConsistent) > 0 { books.turnsAfterDeinit.wrappingAdd(1, ordering: .sequentiallyConsistent) }
        books.inTurn.store(true, ordering: .sequentiallyConsistent)
        hook?(self)
        let taken = books.pending.exchange(0, ordering: .sequentiallyConsistent)
        books.processed.wrappingAdd(taken, ordering: .sequentiallyConsistent)
        books.inTurn.store(false, ordering: .sequentiallyConsistent)
        books.turnsEnded.wrappingAdd(1, ordering: .sequentiallyConsistent)
        return .idle
    }

    func runAfterShutdown() {
        let taken = books.pending.exchange(0, ordering: .sequentiallyConsistent)
        books.processed.wrappingAdd(taken, ordering: .sequentiallyConsistent)
    }
}

/// The test as the unit's owner: takes a retain and sets O; `leave` clears O and releases
/// the retain only if the unit was idle (else it went to the entry or the worker, L4).
struct TestOwner {
    let retain: Unmanaged<OwnedUnit>
    init(_ unit: OwnedUnit) {
        retain = Unmanaged.passRetained(unit)
        unit.unitHeader.ownerArrives()
    }
    /// Returns whether the unit was idle (the release happened here).
    @discardableResult
    func leave() -> Bool {
        let wasIdle = retain._withUnsafeGuaranteedRef { $0.unitHeader.ownerLeaves() }
        if wasIdle { retain.release() }
        return wasIdle
    }
}

/// A unit that holds its worker until `open` is signalled.
final class GateUnit: ScheduledUnit, @unchecked Sendable {
    let unitHeader = UnitHeader(kind: GateUnit.unitKind)
    static let unitKind = UnitKind.register(GateUnit.self)
    let entered = DispatchSemaphoreLike()
    let open = DispatchSemaphoreLike()
    func runTurn(budget: Int) -> TurnOutcome {
        entered.signal()
        open.wait()
        return .idle
    }
    func runAfterShutdown() {}
}

/// A counting semaphore on a POSIX semaphore (no Dispatch in this test target's imports).
final class DispatchSemaphoreLike: @unchecked Sendable {
    private var semaphore = sem_t()
    init() { sem_init(&semaphore, 0, 0) }
    deinit { sem_destroy(&semaphore) }
    func signal() { sem_post(&semaphore) }
    func wait() { while sem_wait(&semaphore) != 0 {} }
}

@Suite("Owned units: entries without a retain (ScheduledUnit Lifetime)")
struct OwnedUnitTests {
    static let threads = 4
    static let sendsPerThread = 2_000

    /// Sends from several threads at once (each holding its own reference), then waits
    /// until every send was processed and the unit is idle.
    static func storm(_ unit: OwnedUnit, via scheduler: Scheduler, owned: Bool) -> Bool {
        let processedBefore = unit.books.processed.load(ordering: .sequentiallyConsistent)
        var started: [pthread_t] = []
        final class Job: @unchecked Sendable {
            let unit: OwnedUnit, scheduler: Scheduler, owned: Bool
            init(_ unit: OwnedUnit, _ scheduler: Scheduler, _ owned: Bool) { self.unit = unit; self.scheduler = scheduler; self.owned = owned }
        }
        for _ in 0..<Self.threads {
            var thread = pthread_t()
            let job = Unmanaged.passRetained(Job(unit, scheduler, owned)).toOpaque()
            let rc = pthread_create(&thread, nil, { raw in
                let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                for _ in 0..<OwnedUnitTests.sendsPerThread { job.unit.send(via: job.scheduler, owned: job.owned) }
                return nil
            }, job)
            precondition(rc == 0)
            started.append(thread)
        }
        for thread in started { pthread_join(thread, nil) }
        let total = processedBefore + started.count * sendsPerThread
        return waitUntil { unit.books.processed.load(ordering: .sequentiallyConsistent) == total
                           && unit.stateSnapshot == UnitHeader.idle }
    }

    @Test("many schedules of an owned unit from several threads take no retain of it; the owner leaving an idle unit frees it at once")
    func leaveWhileIdle() throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let books = UnitBooks()
        var unit: OwnedUnit? = OwnedUnit(books: books)
        let owner = TestOwner(unit!)
        #expect(Self.storm(unit!, via: scheduler, owned: true))
        #expect(Self.storm(unit!, via: scheduler, owned: false))  // a wrong guess of O costs a CAS, never a retain
        // Balanced, to the retain: an entry that released a retain it did not own would
        // free the unit here, one that kept a retain would keep it alive after the owner left.
        unit = nil
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 0, "freed while its owner holds it")
        #expect(owner.leave(), "idle: the owner releases its own retain")
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 1, "still alive after its owner left")
        #expect(books.turnsAfterDeinit.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test("the owner leaving a queued unit hands its retain to the entry: the unit runs its turn, then is freed")
    func leaveWhileQueued() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let books = UnitBooks()
        var unit: OwnedUnit? = OwnedUnit(books: books)
        let owner = TestOwner(unit!)
        #expect(Self.storm(unit!, via: scheduler, owned: true))
        let turnsBefore = books.turnsEnded.load(ordering: .sequentiallyConsistent)
        // Keep the only worker busy, then queue the unit behind it (an unretained entry: O set).
        let gate = GateUnit()
        scheduler.schedule(gate)
        gate.entered.wait()
        unit!.send(via: scheduler, owned: true)
        #expect(unit!.stateSnapshot == UnitHeader.scheduled)
        unit = nil
        #expect(!owner.leave(), "queued: the retain goes to the entry")
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 0, "freed while queued")
        gate.open.signal()
        #expect(waitUntil { books.deinits.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(books.turnsAtDeinit.load(ordering: .sequentiallyConsistent) == turnsBefore + 1, "freed before its last turn")
        #expect(books.turnsAfterDeinit.load(ordering: .sequentiallyConsistent) == 0)
        #expect(books.deinitDuringTurn.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test("the owner leaving a running unit hands its retain to the worker: freed after the turn ends, not during it")
    func leaveWhileRunning() throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let books = UnitBooks()
        let holding = Atomic<Bool>(false)
        let entered = DispatchSemaphoreLike(), release = DispatchSemaphoreLike()
        var unit: OwnedUnit? = OwnedUnit(books: books) { _ in
            if holding.load(ordering: .sequentiallyConsistent) {
                entered.signal()
                release.wait()
            }
        }
        let owner = TestOwner(unit!)
        #expect(Self.storm(unit!, via: scheduler, owned: true))
        let turnsBefore = books.turnsEnded.load(ordering: .sequentiallyConsistent)
        holding.store(true, ordering: .sequentiallyConsistent)
        unit!.send(via: scheduler, owned: true)
        entered.wait()  // inside the turn now
        unit = nil
        #expect(!owner.leave(), "running: the retain goes to the worker")
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 0)
        release.signal()
        #expect(waitUntil { books.deinits.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(books.turnsAtDeinit.load(ordering: .sequentiallyConsistent) == turnsBefore + 1)
        #expect(books.deinitDuringTurn.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test("a unit whose own turn makes its owner leave (an actor's final turn) lives to the end of that turn, then is freed")
    func leaveFromItsOwnTurn() throws {
        let scheduler = try makeScheduler(workers: 2)
        defer { scheduler.shutdown() }
        let books = UnitBooks()
        final class OwnerSlot: @unchecked Sendable { var owner: TestOwner?; let leaving = Atomic<Bool>(false) }
        let slot = OwnerSlot()
        var unit: OwnedUnit? = OwnedUnit(books: books) { _ in
            if slot.leaving.load(ordering: .sequentiallyConsistent), let owner = slot.owner {
                slot.owner = nil
                let wasIdle = owner.leave()
                precondition(!wasIdle, "a running unit is never idle")
            }
        }
        slot.owner = TestOwner(unit!)
        #expect(Self.storm(unit!, via: scheduler, owned: true))
        let turnsBefore = books.turnsEnded.load(ordering: .sequentiallyConsistent)
        slot.leaving.store(true, ordering: .sequentiallyConsistent)
        unit!.send(via: scheduler, owned: true)
        unit = nil
        #expect(waitUntil { books.deinits.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(books.turnsAtDeinit.load(ordering: .sequentiallyConsistent) == turnsBefore + 1)
        #expect(books.deinitDuringTurn.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test("owned units on a deterministic scheduler and through shutdown's hand-back settle their retains as workers do")
    func deterministicAndAbandoned() throws {
        // Deterministic engine: the owner leaves while the unit is runnable.
        let deterministic = DeterministicScheduler(seed: 7)
        let books = UnitBooks()
        var unit: OwnedUnit? = OwnedUnit(books: books)
        let owner = TestOwner(unit!)
        unit!.send(via: deterministic.scheduler, owned: true)
        unit = nil
        #expect(!owner.leave())
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 0)
        _ = try deterministic.runUntilQuiescent()
        #expect(books.deinits.load(ordering: .sequentiallyConsistent) == 1)
        #expect(books.turnsAtDeinit.load(ordering: .sequentiallyConsistent) == 1)

        // Shutdown's hand-back: an owned unit queued behind a turn that outlives the
        // shutdown (timeout zero: the worker is detached inside the gate's turn) goes
        // through abandon while the owner still holds it, then the owner leaves it idle.
        let scheduler = try makeScheduler(workers: 1)
        let books2 = UnitBooks()
        var unit2: OwnedUnit? = OwnedUnit(books: books2)
        let owner2 = TestOwner(unit2!)
        let gate = GateUnit()
        scheduler.schedule(gate)
        gate.entered.wait()
        unit2!.send(via: scheduler, owned: true)
        unit2 = nil
        do {
            let handedBack = scheduler.shutdown(timeout: .zero)
            gate.open.signal()  // the detached worker's turn ends; the unit was handed back already
            #expect(handedBack.count == 1)
            #expect(books2.processed.load(ordering: .sequentiallyConsistent) == 1)
            #expect(books2.deinits.load(ordering: .sequentiallyConsistent) == 0, "the owner still holds it")
            #expect(owner2.leave(), "idle after the hand-back: the owner releases")
            #expect(books2.deinits.load(ordering: .sequentiallyConsistent) == 0, "the hand-back array still holds it")
            withExtendedLifetime(handedBack) {}  // an optimised build may free it after its last use
        }
        #expect(books2.deinits.load(ordering: .sequentiallyConsistent) == 1)
        #expect(books2.turnsAfterDeinit.load(ordering: .sequentiallyConsistent) == 0)
    }

    @Test("a schedule guessing an owner from a worker of the same scheduler: the fast path, a unit already queued, a unit without an owner (a retained entry), a running unit (notified)")
    func scheduleOwnedFromWorker() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let ownedBooks = UnitBooks(), loneBooks = UnitBooks(), selfBooks = UnitBooks()
        let owned = OwnedUnit(books: ownedBooks)
        let owner = TestOwner(owned)
        let again = Atomic<Bool>(true)
        let selfScheduling = OwnedUnit(books: selfBooks) { unit in
            // From inside its own turn: running → notified (T2), one more turn follows.
            if again.exchange(false, ordering: .sequentiallyConsistent) { unit.send(via: scheduler, owned: true) }
        }
        let selfOwner = TestOwner(selfScheduling)
        // A unit without an owner (O clear): the driver holds the only reference until its
        // schedule, then only the retained entry (and the worker after it) keeps it alive.
        final class Holder: @unchecked Sendable { var lone: OwnedUnit? }
        let holder = Holder()
        holder.lone = OwnedUnit(books: loneBooks)
        let driver = ClosureUnit { _, _ in
            owned.send(via: scheduler, owned: true)  // idle with O: the blind CAS, the empty next slot
            owned.send(via: scheduler, owned: true)  // already scheduled: nothing queued (twice would trap in T3)
            let lone = holder.lone!
            holder.lone = nil
            lone.send(via: scheduler, owned: true)  // O clear: the guess fails, a retained entry, the slot displaced
            selfScheduling.send(via: scheduler, owned: true)
            return .idle
        }
        scheduler.schedule(driver)
        #expect(waitUntil {
            ownedBooks.processed.load(ordering: .sequentiallyConsistent) == 2
                && loneBooks.deinits.load(ordering: .sequentiallyConsistent) == 1
                && selfBooks.processed.load(ordering: .sequentiallyConsistent) == 2
                && owned.stateSnapshot == UnitHeader.idle && selfScheduling.stateSnapshot == UnitHeader.idle
        })
        #expect(ownedBooks.turnsEnded.load(ordering: .sequentiallyConsistent) == 1, "scheduled twice, queued once")
        #expect(selfBooks.turnsEnded.load(ordering: .sequentiallyConsistent) == 2, "notified during its turn: one more")
        #expect(loneBooks.turnsAtDeinit.load(ordering: .sequentiallyConsistent) == 1, "freed before its turn ended")
        #expect(loneBooks.turnsAfterDeinit.load(ordering: .sequentiallyConsistent) == 0)
        #expect(loneBooks.deinitDuringTurn.load(ordering: .sequentiallyConsistent) == 0)
        #expect(owner.leave() && selfOwner.leave(), "idle: the owners release their own retains")
        // Balanced: a worker that released a retain an owned unit's entry never held would
        // have freed it by now, while this test still holds it.
        #expect(ownedBooks.deinits.load(ordering: .sequentiallyConsistent) == 0)
        #expect(selfBooks.deinits.load(ordering: .sequentiallyConsistent) == 0)
        withExtendedLifetime((owned, selfScheduling)) {}
    }
}
