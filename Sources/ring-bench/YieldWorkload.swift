// yield: the scheduler alone. 1000 bare ScheduledUnits, scheduled from the driver thread;
// each turn counts itself and returns .more until the unit has run its share of N turns,
// so every turn is a local-queue pop and push (and, with more workers, steals). Check:
// every unit ran exactly its share and went idle.
import MNScheduler
import Synchronization

enum YieldWorkload {
    /// A unit that returns .more until it has run `turns` turns. `ran` is touched only
    /// inside turns (never concurrent with itself: the scheduler's guarantee under test),
    /// read after the latch.
    final class YieldUnit: ScheduledUnit, @unchecked Sendable {
        let unitHeader = UnitHeader(kind: YieldUnit.unitKind)
        static let unitKind = UnitKind.register(YieldUnit.self)
        let turns: Int
        var ran = 0
        let latch: Latch
        init(turns: Int, latch: Latch) {
            self.turns = turns
            self.latch = latch
        }
        func runTurn(budget: Int) -> TurnOutcome {
            ran += 1
            if ran < turns { return .more }
            latch.countDown()
            return .idle
        }
        func runAfterShutdown() {}
    }

    static func run(_ cell: Cell) -> RunOutcome {
        guard cell.runtime == .fastmailbox else { return .failed("yield has no \(cell.runtime) implementation") }
        let count = cell.variant.parameter
        let turns = max(cell.size / count, 1)
        let latch = Latch(count)
        let scheduler = Blocking.scheduler(workers: cell.workers)
        defer { scheduler.shutdown() }
        let units = (0..<count).map { _ in YieldUnit(turns: turns, latch: latch) }
        let t0 = Clock.now()
        for unit in units { scheduler.schedule(unit) }
        let finished = latch.wait()
        let check: String? = if !finished {
            "\(latch.count) of \(count) units never finished"
        } else if let bad = units.first(where: { $0.ran != turns }) {
            "a unit ran \(bad.ran) turns, not \(turns)"
        } else {
            nil
        }
        return .timed(since: t0, operations: count * turns, check: check)
    }
}
