// ring: raw Concurrency Kit rings (MNScheduler's RawRing) between plain threads, the floor
// under every mailbox: spsc (1 → 1, single-producer enqueue), mpsc (2 → 1) and mpmc
// (2 → 2, multi-consumer dequeue) with the multi-producer enqueue every MPSCQueue uses: ck's
// ticket reserve, then a commit that waits for earlier tickets spinning briefly and then
// yielding the CPU (ckshim_ring_enqueue_mp_yielding). Not ck's own commit, which spins
// without yielding: with more threads than CPUs (3 and 4 threads here, on 2 CPUs) a
// producer preempted between reserve and commit left the others spinning for whole time
// slices, and one run stalled for the 120 s timeout (a full run in stop 18; most likely
// also the cell that failed CI's smoke run in stop 19). A full ring makes the producer back
// off and retry. Checked by QueueDriver (count, sum, per-producer order).
import MNScheduler

enum RingWorkload {
    static func run(_ cell: Cell) -> RunOutcome {
        guard cell.runtime == .ckRing else { return .failed("ring has no \(cell.runtime) implementation") }
        let ring = RawRing(capacity: cell.capacity ?? 1024)
        let outcome = run(cell, on: RingHandle(ring: ring))
        // A run that timed out leaves its threads on the ring: leak it rather than free it
        // under them (it once crashed the next cell).
        if !QueueDriver.leftThreadsRunning(outcome) { ring.deallocate() }
        return outcome
    }

    private static func run(_ cell: Cell, on handle: RingHandle) -> RunOutcome {
        switch cell.variant.parameter {
        case 1:
            return QueueDriver.run(producers: 1, consumers: 1, each: cell.size, produce: { word in
                var backoff = Backoff()
                while !handle.ring.enqueueSingleProducer(word: word) { backoff.pause() }
            }, take: { batch in
                var word: UInt = 0
                while batch.count < 64, handle.ring.dequeueSingleConsumer(word: &word) { batch.append(word) }
            })
        case 2:
            return QueueDriver.run(producers: 2, consumers: 1, each: cell.size / 2, produce: { word in
                var backoff = Backoff()
                while !handle.ring.enqueueMultiProducerYielding(word: word) { backoff.pause() }
            }, take: { batch in
                var word: UInt = 0
                while batch.count < 64, handle.ring.dequeueSingleConsumer(word: &word) { batch.append(word) }
            })
        default:
            // The pointer API is the multi-consumer one; a marker bit keeps every word non-nil.
            let marker: UInt = 1 << 48
            return QueueDriver.run(producers: 2, consumers: 2, each: cell.size / 2, produce: { word in
                var backoff = Backoff()
                while !handle.ring.enqueueMultiProducerYielding(word: word | marker) { backoff.pause() }
            }, take: { batch in
                while batch.count < 64, let pointer = handle.ring.dequeueMultiConsumer() {
                    batch.append(UInt(bitPattern: pointer) & ~marker)
                }
            })
        }
    }
}

/// A RawRing shared by the threads of one run: the ring is thread-safe by construction
/// (ck_ring's own protocol), and it outlives them (hence @unchecked).
struct RingHandle: @unchecked Sendable {
    let ring: RawRing
}
