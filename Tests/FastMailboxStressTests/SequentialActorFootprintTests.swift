import Testing
import Logging
import MNScheduler
import MallocCounter
@testable import FastMailbox
import FastMailboxTestSupport

/// The heap a parked sequential actor keeps. It reads the heap of the whole process
/// (mallinfo), so it runs alone, in the stress target.
@Suite("Sequential actor footprint", .serialized) struct SequentialActorFootprintTests {
    /// Heap bytes per sequential actor parked in `for await` after one message (mallinfo:
    /// chunk headers included), and again once two walks took the idle rings back.
    static func heapPerParkedActor(count: Int) throws -> (parked: Double, ringless: Double) {
        var configuration = SchedulerConfiguration()
        configuration.workers = 1
        configuration.idleMailboxReclaimMilliseconds = 0  // the test walks
        let system = try ActorSystem(configuration: configuration,
                                     logger: Logger(label: "fastmailbox.tests") { _ in SwiftLogNoOpLogHandler() })
        let received = Probe<Int>()
        var refs: [ActorRef<Int>] = []
        refs.reserveCapacity(count)
        let start = malloc_counter_heap_bytes()
        for i in 0..<count {
            let ref = try system.spawn { (inbox: Inbox<Int>) in
                received.record(try await inbox.receive())
                for await _ in inbox {}  // parked until shutdown
            }
            ref.tell(i)
            refs.append(ref)
        }
        let cells = refs.map { $0.identity as! SequentialActorCell<Int> }
        func allParked() -> Bool {
            cells.allSatisfy { SequentialWake.phase($0.wake.load(ordering: .acquiring)) == SequentialWake.parked }
        }
        #expect(eventually(timeout: .seconds(60)) { received.count == count && allParked() })
        let parked = Double(Int(malloc_counter_heap_bytes()) - Int(start)) / Double(count)
        _ = system.reclaimIdleMailboxes()
        #expect(system.reclaimIdleMailboxes() == count)
        #expect(eventually(timeout: .seconds(60)) { system.idleMailboxRingsReleased == count && allParked() })
        #expect(eventually { RingEpoch.collect(wait: true) == 0 })
        let ringless = Double(Int(malloc_counter_heap_bytes()) - Int(start)) / Double(count)
        let report = system.shutdown()
        #expect(report.isBalanced && report.delivered == count, "\(report)")
        return (parked, ringless)
    }

    @Test("memory: a sequential actor parked in receive fits its task's first allocator slab, and gives its idle ring back")
    func heapPerParkedSequentialActor() throws {
        guard malloc_counter_active() != 0 else { return }  // TSan build: TSan owns malloc
        let (parked, ringless) = try Self.heapPerParkedActor(count: 4_000)
        // What stays (SequentialActorCell, "Cost floor"): the task object and its first
        // task-allocator slab (the runtime's), cell, queue, Inbox, the body's closure
        // context, a registry slot; and the ring until a walk takes it. Debug builds' larger
        // frames take a second slab, hence their higher bounds. Averaged over many actors,
        // so the test's own stray allocations move it little.
        #if DEBUG
        let parkedBound = 3_500.0, ringlessBound = 3_000.0
        #else
        let parkedBound = 2_400.0, ringlessBound = 1_900.0
        #endif
        #expect(parked <= parkedBound, "\(parked) heap bytes per parked sequential actor (ringless \(ringless))")
        // The small first ring (its header and its slots of 8 bytes) given back; half of it,
        // since the walk's own bookkeeping stays.
        let ring = Double(RawRing.mailboxAllocationSize(capacity: MPSCQueue.firstRingCapacity, slotBytes: 8))
        #expect(parked - ringless >= ring / 2, "\(parked) B parked, \(ringless) B once the rings were given back")
        #expect(ringless <= ringlessBound, "\(ringless) heap bytes per parked sequential actor without its ring")
    }
}
