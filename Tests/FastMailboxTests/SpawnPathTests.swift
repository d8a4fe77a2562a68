// The spawn path's costs that a count of allocations does not show (SpawnCostTests has
// those): which references a spawn takes, and on what.

import Logging
import MNScheduler
import Testing
@testable import FastMailbox
import FastMailboxTestSupport
import FastMailboxTestKit

@Suite("Spawn path")
struct SpawnPathTests {
    /// A weak reference to the system gives it a side table, and every retain and release
    /// of it (a spawn's cell takes one) then goes through the runtime's slow path. The
    /// automatic idle-mailbox walk's timer held one (`[weak self]`).
    @Test("the automatic idle-mailbox walk holds no weak reference to the system")
    func noWeakReferenceToTheSystem() throws {
        let system = try makeReclaimingSystem(workers: 1, idleMailboxReclaimMilliseconds: 5)
        // 1: the object's own weak count, with no side table (2 once a weak reference exists).
        #expect(_getWeakRetainCount(system) == 1)
        let probe = Probe<Int>()
        let ref = try system.spawn { (m: Int, _) in probe.record(m) }
        ref.tell(1)
        #expect(eventually { probe.count == 1 })
        #expect(_getWeakRetainCount(system) == 1)
        #expect(system.shutdown().isBalanced)
    }

    /// What a closure actor's closure captured, and whether it is still alive.
    final class Captured: Sendable {}
    struct Boom: Error {}

    final class Echo: EventActor {
        func receive(_ message: Int, context: ActorContext<Int>) {}
    }
    struct Tally: ActorBehavior {
        var total = 0
        mutating func receive(_ message: Int, context: ActorContext<Int>) { total += message }
    }

    @Test("an event actor, a closure and a value behaviour all live in the one cell class, ActorCell, with their behaviour inside")
    func oneCellClassForEveryBehaviour() throws {
        let deterministic = DeterministicScheduler(seed: 35)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let event = try system.spawn { Echo() }
        let closure = try system.spawn { (_: Int, _) in }
        let value = try system.spawn(Tally())
        #expect(event.identity is ActorCell<EventActorCellBehavior<Echo>>)
        #expect(closure.identity is ActorCell<ClosureCellBehavior<Int>>)
        let valueCell = try #require(value.identity as? ActorCell<ValueCellBehavior<Tally>>)
        for n in 1...3 { value.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(valueCell.behavior.state?.total == 6, "the value is mutated in place in the cell")
    }

    @Test("an event actor's factory runs once, at spawn, and not at all when the spawn's arguments are refused")
    func factoryRunsOnceAfterTheArgumentsAreChecked() throws {
        let deterministic = DeterministicScheduler(seed: 36)
        let system = makeDeterministicSystem(deterministic)
        defer { system.shutdown() }
        let made = Probe<Int>()
        #expect(throws: ActorSystemError.invalidMailboxCapacity(10)) {
            try system.spawn(options: SpawnOptions(mailboxCapacity: 10)) { made.record(0); return Echo() }
        }
        #expect(made.count == 0, "the factory ran for a refused spawn")
        let ref = try system.spawn { made.record(1); return Echo() }
        #expect(made.values == [1], "the first instance is made on the spawning thread")
        ref.tell(1)
        try deterministic.runUntilQuiescent()
        #expect(made.values == [1], "the first turn uses the instance made at spawn")
    }

    /// The closure is the cell's behaviour (`ClosureCellBehavior`), not an object beside
    /// the cell (SpawnCostTests counts the allocations).
    @Test("a closure actor's cell holds the closure: the same one after a restart, dropped at its stop")
    func closureHeldByTheCell() throws {
        let deterministic = DeterministicScheduler(seed: 32)
        let system = makeDeterministicSystem(deterministic)
        let got = Probe<Int>()
        weak var weakCaptured: Captured?
        let ref: ActorRef<Int>
        do {
            let captured = Captured()
            weakCaptured = captured
            ref = try system.spawn { (n: Int, _) in
                withExtendedLifetime(captured) {}
                if n == 0 { throw Boom() }  // the default supervisor restarts
                got.record(n)
            }
        }
        #expect(ref.identity is ActorCell<ClosureCellBehavior<Int>>)
        for n in [1, 0, 2] { ref.tell(n) }
        try deterministic.runUntilQuiescent()
        #expect(got.values == [1, 2], "the closure serves again after the restart")
        #expect(weakCaptured != nil, "the cell keeps the closure while the actor runs")
        ref.stop()
        try deterministic.runUntilQuiescent()
        #expect(weakCaptured == nil, "the stopped cell (still referenced) dropped the closure")
        ref.tell(3)
        try deterministic.runUntilQuiescent()
        #expect(got.values == [1, 2])
        #expect(system.shutdown().isBalanced)
        withExtendedLifetime(ref) {}
    }

    @Test("an actor spawned with the system's supervisor keeps none; another one keeps its own")
    func defaultSupervisorIsNotKept() throws {
        let deterministic = DeterministicScheduler(seed: 31)
        let system = makeDeterministicSystem(deterministic)
        let plain = try system.spawn { (_: Int, _) in }
        let explicitDefault = try system.spawn(options: SpawnOptions(supervisor: system.defaultSupervisor)) { (_: Int, _) in }
        let custom = try system.spawn(options: SpawnOptions(supervisor: .stop)) { (_: Int, _) in }
        for ref in [plain, explicitDefault] {
            let cell = try #require(ref.identity as? ActorCellBase<Int>)
            #expect(cell.spawnInfo == nil, "no side object for the default supervisor")
            #expect(cell.supervisor.sharesStorage(with: system.defaultSupervisor))
        }
        let customCell = try #require(custom.identity as? ActorCellBase<Int>)
        #expect(customCell.supervisor.sharesStorage(with: .stop))
        #expect(system.shutdown().isBalanced)
    }

    /// Cells allocated one after another (a run of spawns) have their homes in one group of
    /// consecutive slots: an insertion misses once per group of blocks (CellTable's comment).
    @Test("the registry's table puts cells allocated in a row in consecutive slots")
    func consecutiveCellsShareAGroup() {
        let block = 1 << CellTable.blockBits, group = 1 << CellTable.groupBits
        for index in 1...1_000 {
            let base = UInt(0x7f00_0000_0000) + UInt(index * group * block)
            let homes = (0..<group).map { CellTable.home(address: base + UInt($0 * block) + 0x10, bits: 20) }
            #expect(homes[0] % group == 0 && homes == (0..<group).map { homes[0] + $0 }, "\(homes)")
        }
    }

    /// Groups still spread: cells that survive in a stride (every other spawn, every 64th)
    /// do not crowd a few homes. Linear probing is replayed over the homes of 20,000
    /// addresses in a table at its fullest (3/4).
    @Test("cells that survive in a stride keep probes short", arguments: [1, 2, 3, 8, 64, 4_096])
    func stridedSurvivorsKeepProbesShort(stride: Int) {
        let count = 20_000
        var bits = CellTable.minimumBits
        while count * 4 > (1 << bits) * 3 { bits += 1 }
        let mask = (1 << bits) - 1
        var taken = [Bool](repeating: false, count: 1 << bits)
        var longest = 0
        for index in 0..<count {
            let address = UInt(0x7f12_3456_7000) + UInt(index * stride) << UInt(CellTable.blockBits)
            let home = CellTable.home(address: address, bits: bits)
            var slot = home
            while taken[slot] { slot = (slot + 1) & mask }
            taken[slot] = true
            longest = max(longest, (slot - home) & mask)
        }
        #expect(longest < 32, "longest probe \(longest) with stride \(stride)")
    }
}
