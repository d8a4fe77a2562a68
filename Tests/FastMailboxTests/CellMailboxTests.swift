// A cell stores its mailbox queue inline and moves messages through it with the same typed
// operations (MessageEncoding) as a standalone mailbox. Releasing the payloads of messages
// nobody took is the queue's own job, done by its deinit when the cell goes. These tests put
// messages into a cell's mailbox that no turn takes, drop the cell, and count the payloads:
// each released exactly once (a double release drives the count below its start, and
// ASan reports it), for ring and overflow slots, boxed messages, a lazily allocated ring
// and one reserved at spawn. The cells are made directly and never enrolled, so no turn
// runs and nothing is timed.

import Synchronization
import Testing
@testable import FastMailbox
import MNScheduler
import FastMailboxTestSupport
import FastMailboxTestKit

/// A payload that counts its live instances (its own counter: independent of other suites).
private final class Counted: Sendable {
    static let live = Atomic<Int>(0)
    let value: Int
    init(_ value: Int) { self.value = value; Counted.live.wrappingAdd(1, ordering: .relaxed) }
    deinit { Counted.live.wrappingSubtract(1, ordering: .relaxed) }
}

/// Over 64 bytes: travels boxed.
private struct BigCounted: Sendable {
    var words: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var payload: Counted
}

@Suite("A cell's inline mailbox queue", .serialized)
struct CellMailboxTests {
    private func makeEventCell<M: Sendable>(_ system: ActorSystem, capacity: Int, _: M.Type) throws -> ActorCell<EventActorCellBehavior<ClosureActor<M>>> {
        let cell = ActorCell<EventActorCellBehavior<ClosureActor<M>>>(id: system.nextActorID(), name: nil, system: system, parent: nil,
                                              supervisor: system.defaultSupervisor,
                                              mailbox: try system.mailboxShape(capacity: capacity, for: M.self),
                                              turn: nil, bounded: false, behavior: EventActorCellBehavior(instance: ClosureActor { _, _ in }, factory: nil))
        try system.reserveEagerRing(of: cell.queue, for: M.self)  // as the spawn does
        return cell
    }

    @Test("a cell stores its mailbox queue: sends land in it, its counts are the cell's; a pool's router leaves its own unused")
    func cellIsItsOwnQueue() throws {
        let deterministic = DeterministicScheduler(seed: 44)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let cell = try makeEventCell(system, capacity: 4, Int.self)
        #expect(cell.mailbox.isInline, "one object: the queue lies inside the cell (<doc:ActorCells>, \"One object per actor\")")
        #expect(!cell.mailbox.hasRing, "the ring is lazy")
        #expect(cell.headerIsPlaced, "the unit header is the cell's first stored property (UnitHeader.swift, H1)")
        for i in 0..<5 { #expect(cell.mailbox.send(i).isAccepted) }  // 3 in the ring, 2 overflowed
        #expect(cell.acceptedCount == 5 && cell.overflowCount == 2 && cell.reportFigures.left == 5)
        var taken: [Int] = []
        while cell.mailbox.drain(max: 10, { taken.append($0) }) == .more {}
        #expect(taken == [0, 1, 2, 3, 4])
        #expect(cell.acceptedCount == 5 && cell.retiredAcceptedCount == 5 && cell.reportFigures.left == 0)
        // A spawned event actor's queue may give its ring back (the idle-mailbox walk asks the cell itself).
        let spawned = try system.spawn { (_: Int, _) in }
        guard case .cell(let spawnedCell) = spawned.target else { Issue.record("an event actor's ref is its cell"); return }
        #expect(spawnedCell.mailbox(of: Int.self).isInline && spawnedCell.mailbox(of: Int.self).reclaimable)
        // A router has no mailbox: its queue stays ring-less, counts 0, and is never reclaimable.
        let pool = try system.spawn(options: SpawnOptions(pool: SpawnOptions.Pool(size: 2))) { (_: Int, _) in }
        guard case .router(let router) = pool.target else { Issue.record("a pool's ref is its router"); return }
        pool.tell(1)
        try deterministic.runUntilQuiescent()
        #expect(!router.mailbox(of: Int.self).hasRing && !router.mailbox(of: Int.self).reclaimable)
        #expect(router.headerIsPlaced && spawnedCell.headerIsPlaced)
        let sequentialCell = SequentialActorCell<Int>(id: system.nextActorID(), name: nil, system: system,
                                                      mailbox: try system.mailboxShape(capacity: 4, for: Int.self),
                                                      body: { _ in })
        #expect(sequentialCell.headerIsPlaced)
        #expect(router.acceptedCount == 0 && router.overflowCount == 0)
    }

    @Test("an event actor's cell releases the payloads left in its mailbox exactly once when it goes (ring, overflow, boxed, eager ring)")
    func eventCellReleasesLeftovers() throws {
        let deterministic = DeterministicScheduler(seed: 41)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let before = Counted.live.load(ordering: .relaxed)
        for capacity in [4, ActorSystem.eagerRingCapacity] {
            do {
                let cell = try makeEventCell(system, capacity: capacity, Counted.self)
                let mailbox = cell.mailbox  // the cell's own queue, typed
                #expect((mailbox.ringBytes != 0) == (capacity >= ActorSystem.eagerRingCapacity), "eager ring reserved at spawn")
                for i in 0..<10 { #expect(mailbox.send(Counted(i)).isAccepted) }  // no turn takes them
                if capacity == 4 { #expect(mailbox.overflowSendCount == 7, "3 in the ring, 7 in the overflow") }
                var taken: [Int] = []
                _ = mailbox.drain(max: 2) { taken.append($0.value) }
                #expect(taken == [0, 1])
                #expect(Counted.live.load(ordering: .relaxed) == before + 8)
            }
            #expect(Counted.live.load(ordering: .relaxed) == before, "capacity \(capacity): the 8 left released once, with the cell")
        }
        do {
            let cell = try makeEventCell(system, capacity: 4, BigCounted.self)
            #expect(Mailbox<BigCounted>.isBoxed)
            for i in 0..<6 { _ = cell.mailbox.send(BigCounted(payload: Counted(i))) }
            #expect(Counted.live.load(ordering: .relaxed) == before + 6)
        }
        #expect(Counted.live.load(ordering: .relaxed) == before, "boxed messages released once, boxes freed (ASan/LSan)")
    }

    @Test("a sequential actor's cell releases the payloads left in its mailbox exactly once when it goes")
    func sequentialCellReleasesLeftovers() throws {
        let deterministic = DeterministicScheduler(seed: 42)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let before = Counted.live.load(ordering: .relaxed)
        do {
            let cell = SequentialActorCell<Counted>(id: system.nextActorID(), name: nil, system: system,
                                                    mailbox: try system.mailboxShape(capacity: 4, for: Counted.self),
                                                    body: { _ in })
            for i in 0..<10 { #expect(cell.mailbox.send(Counted(i)).isAccepted) }
            let (first, _) = cell.mailbox.takeOne()  // the Inbox's specialised take
            #expect(first?.value == 0)
            #expect(Counted.live.load(ordering: .relaxed) == before + 10)
        }
        #expect(Counted.live.load(ordering: .relaxed) == before, "the 9 left (and the one taken) released once each")
    }

    @Test("a send to a cell's closed mailbox hands the message back; nothing is released twice")
    func closedCellMailbox() throws {
        let deterministic = DeterministicScheduler(seed: 43)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let before = Counted.live.load(ordering: .relaxed)
        do {
            let cell = try makeEventCell(system, capacity: 4, Counted.self)
            _ = cell.mailbox.send(Counted(1))
            cell.closeMailbox()
            guard case .closed(let back) = cell.mailbox.send(Counted(2)) else {
                Issue.record("a send to a closed cell mailbox was accepted"); return
            }
            #expect(back.value == 2)
        }
        #expect(Counted.live.load(ordering: .relaxed) == before)
    }

    @Test("a cell's system queue releases the system messages nobody took when it goes (its ring records SystemMessage)")
    func systemQueueReleasesLeftovers() throws {
        let deterministic = DeterministicScheduler(seed: 44)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        weak var watcher: ActorCell<EventActorCellBehavior<ClosureActor<Int>>>?
        do {
            // What AnyActorCell's deinit relies on: a system queue dropped with messages in
            // it (5: ring and overflow) releases what they hold (here the watcher cell).
            let box = try MessageEncoding<SystemMessage>.makeQueueBox(capacity: 4)
            let cell = try makeEventCell(system, capacity: 4, Int.self)
            watcher = cell
            for _ in 0..<5 { _ = MessageEncoding<SystemMessage>.enqueue(.watch(cell), into: box.queue) }
            let queued = box.queue.approximateCount
            #expect(queued == 5)
        }
        #expect(watcher == nil, "the watcher each .watch held was released with the queue")
    }
}
