import Testing
@testable import MNScheduler
import TestSupport

/// Every unit type keeps its header where the scheduler looks (UnitHeader.swift, H1), and
/// registered kinds are distinct.
@Suite struct UnitHeaderTests {
    @Test("the scheduler's own units and the test units store the header first, two words into the object")
    func headersArePlaced() throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let executor = MNSerialExecutor(scheduler: scheduler)
        let lane = MNTaskExecutor.Lane()
        let units: [any ScheduledUnit] = [executor, lane, MailboxUnit(), ClosureUnit()]
        for unit in units { #expect(unit.headerIsPlaced, "\(type(of: unit))") }
        // The turn's code, then the state word and the kind: a unit's small fields may
        // fill the rest of the second word.
        #expect(MemoryLayout<UnitHeader>.size == MemoryLayout<UnsafeRawPointer>.size + 2)
    }

    @Test("each registered type has its own kind; a unit's kind is its type's")
    func kindsAreDistinct() {
        let kinds = [MNSerialExecutor.unitKind, MNTaskExecutor.Lane.unitKind, MailboxUnit.unitKind, ClosureUnit.unitKind]
        #expect(Set(kinds.map(\.index)).count == kinds.count)
        let unit = MailboxUnit()
        let kind = UnitHeader.at(unit.entry).pointee.kind
        #expect(kind == MailboxUnit.unitKind)
    }
}
