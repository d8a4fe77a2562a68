// A unit's own turn (UnitTurn.swift): kept as its code when it captures nothing, and then
// what the worker calls instead of the kind's turn.

import Dispatch
import Synchronization
import Testing
@testable import MNScheduler
import TestSupport

@Suite struct UnitTurnTests {
    /// Counts its turns by the way they came: its own turn, or the kind's `runTurn`.
    final class TwoWayUnit: ScheduledUnit, @unchecked Sendable {
        let unitHeader: UnitHeader
        static let unitKind = UnitKind.register(TwoWayUnit.self)
        let ownTurns = Atomic<Int>(0)
        let kindTurns = Atomic<Int>(0)
        let ran = DispatchSemaphore(value: 0)

        init(turn: UnitTurn?) { unitHeader = UnitHeader(kind: TwoWayUnit.unitKind, turn: turn) }

        func runTurn(budget: Int) -> TurnOutcome {
            kindTurns.wrappingAdd(1, ordering: .sequentiallyConsistent)
            ran.signal()
            return .idle
        }
        func runAfterShutdown() {}

        /// A turn that captures nothing.
        static var ownTurn: UnitTurn {
            { unit, _, _ in
                let unit = unit as! TwoWayUnit
                unit.ownTurns.wrappingAdd(1, ordering: .sequentiallyConsistent)
                unit.ran.signal()
                return .idle
            }
        }
    }

    @Test("a turn that captures nothing is kept as its code, and the code rebuilds a turn that runs it")
    func keptAsCode() throws {
        // Non-generic and capturing nothing: no context, even unoptimised.
        let turn: UnitTurn = { _, budget, _ in budget == 7 ? .more : .idle }
        // Outside #expect and #require, whose expansion passes the argument generically
        // (re-abstracted: a thunk with a context).
        let kept = UnitTurnCode(turn)
        let code = try #require(kept, "a closure with no context keeps its code")
        let unit = ClosureUnit()
        #expect(code.turn(unit, 7, .never) == .more)
        #expect(code.turn(unit, 3, .never) == .idle)
    }

    @Test("a turn with a context is not kept, and the header then has no turn of its own")
    func contextNotKept() {
        let calls = Atomic<Int>(0)
        let turn: UnitTurn = { _, _, _ in calls.wrappingAdd(1, ordering: .relaxed); return .idle }
        let kept = UnitTurnCode(turn)
        #expect(kept == nil)
        let keeps = TwoWayUnit(turn: turn).unitHeader.keepsOwnTurn
        #expect(!keeps)
    }

    @Test("a worker runs a unit through its own turn when the header keeps one, else through its kind",
          arguments: [true, false])
    func workerCallsOwnTurn(kept: Bool) throws {
        let scheduler = try makeScheduler(workers: 1)
        defer { scheduler.shutdown() }
        let calls = Atomic<Int>(0)
        let withContext: UnitTurn = { _, _, _ in calls.wrappingAdd(1, ordering: .relaxed); return .idle }
        let unit = TwoWayUnit(turn: kept ? TwoWayUnit.ownTurn : withContext)
        let keeps = unit.unitHeader.keepsOwnTurn
        #expect(keeps == kept)
        scheduler.schedule(unit)
        #expect(unit.ran.wait(timeout: .now() + 20) == .success)
        #expect(unit.ownTurns.load(ordering: .sequentiallyConsistent) == (kept ? 1 : 0))
        #expect(unit.kindTurns.load(ordering: .sequentiallyConsistent) == (kept ? 0 : 1))
        #expect(calls.load(ordering: .relaxed) == 0, "a turn with a context is never called by the scheduler")
    }
}
