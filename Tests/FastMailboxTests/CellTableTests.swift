// CellTable (the registry's set of live cells): membership, counts and the probing
// invariant T2 under insertions and removals in several orders, counted, never timed.

import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Cell table")
struct CellTableTests {
    /// Closure-actor cells of a deterministic system, registered nowhere: the table under
    /// test is their one owner (a cell has at most one: CellTable T4 sets its owner bit).
    /// Never scheduled: they only need ids.
    static func cells(_ count: Int, in system: ActorSystem) throws -> [AnyActorCell] {
        try (0..<count).map { _ in
            ActorCell<EventActorCellBehavior<ClosureActor<Int>>>(
                id: system.nextActorID(), name: nil, system: system, parent: nil, supervisor: system.defaultSupervisor,
                mailbox: try system.mailboxShape(capacity: 16, for: Int.self), turn: nil, bounded: false,
                behavior: EventActorCellBehavior(instance: ClosureActor { _, _ in }, factory: nil))
        }
    }

    @Test("a slot is one word: a retained cell or nothing, no copy of the id")
    func slotIsOneWord() {
        #expect(MemoryLayout<CellTable.Slot>.stride == MemoryLayout<UnsafeRawPointer>.stride)
    }

    @Test("insert, remove and enumerate keep every cell exactly once")
    func membership() throws {
        let deterministic = DeterministicScheduler(seed: 31)
        let system = makeDeterministicSystem(deterministic)
        let cells = try Self.cells(1_000, in: system)
        let table = CellTable()
        for cell in cells { table.insert(cell) }
        #expect(table.count == 1_000)
        #expect(Set(table.values.map(\.id)) == Set(cells.map(\.id)))
        #expect(table.checkedMaxDisplacement() != nil)
        // Every other one out, then each of them again (already gone: false).
        for (index, cell) in cells.enumerated() where index % 2 == 0 { #expect(table.remove(cell)) }
        for (index, cell) in cells.enumerated() where index % 2 == 0 { #expect(!table.remove(cell)) }
        #expect(table.count == 500)
        #expect(Set(table.values.map(\.id)) == Set(cells.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.id)))
        #expect(table.checkedMaxDisplacement() != nil)
        table.removeAll()
        #expect(table.isEmpty && table.values.isEmpty)
        for cell in try Self.cells(10, in: system) { table.insert(cell) }  // fresh: a cell gets an owner once
        #expect(table.count == 10)
        table.removeAll()
        system.shutdown()
    }

    @Test("the table holds one retain per cell and gives it back on removal")
    func retains() throws {
        let deterministic = DeterministicScheduler(seed: 32)
        let system = makeDeterministicSystem(deterministic)
        let table = CellTable()
        weak var weakCell: AnyActorCell?
        do {
            let cell = try #require(try Self.cells(1, in: system).first)
            weakCell = cell
            table.insert(cell)
        }
        system.shutdown()
        #expect(weakCell != nil, "kept alive by the table")
        #expect(table.remove(try #require(weakCell)))
        #expect(weakCell == nil, "freed once removed")
    }

    /// Shutdown stops cells in the table's slot order, so removals come in slot order: the
    /// survivors end up packed at one end. Before: a removal that left the table 1/8 full
    /// halved it, which doubled the survivors' local density and made one run of about
    /// 8,000 entries (about 5,000 probe steps per later removal).
    @Test("removals in slot order keep probes short (no shrinking into one long run)")
    func slotOrderRemovals() throws {
        let deterministic = DeterministicScheduler(seed: 33)
        let system = makeDeterministicSystem(deterministic)
        let cells = try Self.cells(40_000, in: system)
        let table = CellTable()
        for cell in cells { table.insert(cell) }
        var longest = 0
        for (step, cell) in table.values.enumerated() {
            #expect(table.remove(cell))
            if step % 1_000 == 0 { longest = max(longest, try #require(table.checkedMaxDisplacement())) }
        }
        #expect(table.isEmpty)
        #expect(longest < 64, "longest probe \(longest)")
        system.shutdown()
    }
}
