// MPSCQueue — the unbounded, lock-free-on-the-hot-path, multi-producer single-consumer
// queue of 64-bit words under every mailbox (FastMailbox.Mailbox) and every native actor
// executor (MNSerialExecutor). Built on one ck_ring plus an ordered overflow list.
// model: Models/mailbox.pml (spin; scripts/model-check.sh checks it, Models/README.md)
//
// ## Items
// Every item is `itemBytes` bytes (8 by default: a word, such as a retained object
// pointer). A queue made with more (up to RawRing.maximumSlotBytes) keeps items of that
// size in ring slots rounded up to a multiple of 8: a producer copies its item into the
// slot it reserved and commits it: publishes the slot's own ready mark, without waiting
// for any other producer (ckshim.h, "Ready marks"); the consumer's `drain` hands out
// a pointer to the slot and frees the slot once the body moved the item out. No
// allocation either way. An item that takes the overflow path (a full ring) is copied,
// the same way, into the next free slot of an overflow chunk (see "Ring, then overflow"):
// one allocation per chunk of up to 1,024 items, never one per item.
// The queue never interprets the bytes; moving them is the owner's business (a typed
// owner records its item type, with which the deinit destroys what nobody drained: "Where
// the fields live").
//
// ## Who runs the consumer: the idle flag (`consumerIdle`, one Atomic<Bool>)
// true  = no consumer turn is running or due; false = one is (or is about to be).
// Producer: insert (ring claim+commit, or overflow append), then read the flag; if it is
// true, CAS it true → false. The one producer whose CAS wins is told `becameNonEmpty` and
// must schedule the consumer. A send to a busy queue costs a plain load of a line that
// is rarely written, not a contended read-modify-write.
// Consumer: drain takes whatever is committed. When it finds nothing it goes idle:
// store true (seq_cst), then look again for work: a claimed ring ticket
// (p_head != c_head, which includes claimed-but-uncommitted slots) or the overflow flag
// (the consumer's own pending overflow items are handed out before the drain finds
// nothing, and only it adds any). Nothing → return .empty: the flag stays true and the next
// producer reports becameNonEmpty. Something → CAS the flag true → false: won → the
// consumer keeps its turn (.more); lost → a producer already claimed it and schedules
// the consumer again (.empty: exactly one further turn follows).
// Why no wake-up is lost (a Dekker pair, the store-buffering litmus test): each side
// stores, then loads what the other side stores, and each needs a full (store→load)
// barrier in between, or both can read the old values: the consumer sees no claim, the
// producer sees the flag false, and the item stays unscheduled.
//   Producer: ticket CAS on p_head (ck), then ckshim_fence_atomic_load, then the flag load.
//     x86-64: the CAS is a locked instruction, a full barrier; the fence is free.
//     AArch64: ck's CAS is an exclusive pair without barriers; the fence is `dmb ish`.
//   Consumer (goIdle): flag store (seq_cst), then a full fence, then the p_head load.
//     x86-64: the seq_cst store is an `xchg`, a full barrier; the fence is compiled out
//     (#if arch(x86_64)), so x86 pays nothing more.
//     AArch64: the store is `stlr`, which orders only against later `ldar`s, and ck reads
//     p_head with a plain `ldr` (its load fence orders loads, not this store): without
//     atomicMemoryFence(.sequentiallyConsistent), `dmb ish`, that load could be
//     satisfied before the store is visible. (Checked 2026-11-23: this store-fence-load
//     sequence compiles to `stlrb`, `dmb ish`, `ldr` for aarch64 (Embedded Swift, as the
//     toolchain has no aarch64-linux stdlib) and to `xchgb`, `movl` for x86-64.)
// So either the consumer sees the claim (and keeps or hands over the turn) or the producer
// sees the flag (and schedules). An overflow append that *sets* overflowActive (or falls
// back to the ring) is followed by a seq_cst fence before the flag load (`lock orl` on
// x86-64, `dmb ish` on AArch64), and the consumer reads overflowActive after its fence.
// An append that finds overflowActive already set under the overflow lock (the common
// overflow send: `enqueueOverflow`'s inline case) needs no fence of its own: its item is
// taken by the first take after it (takes and sets are all under the lock), and that take
// is certain to come. Let Q be the producer whose append set the flag that this producer
// P found (no take between Q's and P's critical sections). Q fenced after its append;
// a consumer turn ending in goIdle fenced after its idle store. If Q's fence came first in
// the fences' total order, that goIdle sees overflowActive set (or a later clear, i.e. a
// take after P's append, which took P's item) and keeps the turn; if goIdle's came first,
// Q's flag load sees idle = true and Q schedules the consumer (or another producer did).
// Either way a consumer turn follows that takes P's item, whatever P's own flag load
// reads: a stale false only means P does not schedule a turn that is already due. The
// fence on this path was ~40 % of a fan-in sender's samples (perf annotate, 1 worker:
// every fan-in send overflows a 32-slot mailbox whose sink runs later). The model checks
// this (Models/mailbox.pml: such a producer's flag load may be satisfied right after it
// takes the lock, before its append is visible; BUG_SET_NO_FENCE lets the setting
// append do the same, and loses a wake-up). (The ring's own
// slot/head ordering, including the release fence before a consumer publishes c_head,
// is argued in ckshim.h.)
// Invariants:
//   (S1) consumerIdle == false  ⇔  exactly one consumer turn is running or due;
//   (S2) every inserted item is drained by a consumer turn that starts after it;
//   (S3) exactly one becameNonEmpty per idle → busy transition.
// The flag is read only by producers and written by them only on that transition.
// `approximateCount` (ring size + overflow items) is a snapshot for statistics and
// routing, never a control signal; `hasPendingWork` (flag is false) is.
//
// ## The unit as the idle flag (`signalsUnit`: FastMailbox's event-actor cells)
// A queue that is its own consumer as a ScheduledUnit (an event actor's cell: "One object")
// does not use `consumerIdle`: the unit's state word already says whether a consumer turn
// is running or due, and keeping a second flag in step cost two locked instructions per
// message (the producer's CAS of the flag, then T1's CAS of the state; the drain's idle
// `xchg`, then T4's CAS). model: Models/unit_mailbox.pml.
// Producer: insert (exactly as above, with the same fence after it), then one plain load
// of the state word (`claimConsumer` → `isDue`): scheduled or notified → nothing more (a
// turn is due and will see the item: ScheduledUnit.swift, "Due units"); idle or running →
// `becameNonEmpty`, and the caller schedules the unit (T1 from idle; T2 from running, so
// the running turn's T4 fails and T5 queues another turn: R3). So a send to a busy actor
// still costs one plain load, and a send that wakes one a single CAS.
// Consumer: a drain that finds nothing to take (`runDry`) returns `.empty` when nothing is
// claimed (p_head == c_head), without any store and without a second look at
// overflowActive (below): the turn ends with T4, which fails if a producer's T2 came in
// between. Otherwise an item is certain to
// come whose producer may have found the unit due and left it alone (its claim is visible,
// its commit perhaps not yet), so the turn waits for the commit (`waitForCommit`) and
// returns `.more`: it is re-queued and the next turn takes the item. Why a producer whose
// claim the drain missed cannot also miss the turn: the drain reads p_head after T3 and
// its fence; a producer that then read the word from before T3 would contradict "Due
// units"' fence argument, so it reads running (or later): T2, or T1 after T4. The drain's
// p_head load comes before T4's RMW in program order (a load before a release RMW:
// ordered on x86-64 and AArch64), so a claim that T4's CAS does not see is one whose
// producer reads running or idle and schedules. The overflow: an append that sets
// overflowActive fences before its load like a ring insert; an append behind an active
// overflow (no fence) relies, as above, on the producer Q that set the flag: Q's look at
// the word makes a turn due that sees the flag, and that turn (or a later one, if the ring
// is not quiescent, whose producer schedules it after its commit) takes the whole list,
// including the later append. So runDry needs no overflowActive test of its own: the drain
// looked at the flag in this turn (after T3's fence) and took an overflow it found on a
// quiescent ring; one it found on a ring that is not quiescent has a claimed slot beside
// it, which keeps the turn anyway (p_head only grows until this consumer takes); one set
// after that look was set by a producer whose fenced look at the word follows T3 ("Due
// units"), so it reads running or idle and makes T2 or T1 (Models/unit_mailbox.pml checks
// runDry without the test; -DDRY_TESTS_OVERFLOW keeps it, and passes too). A drain that
// knows its queue signals its unit (`signallingUnit`, an event actor's pass) goes to
// runDry without testing `signalsUnit`. No ring (given back): `.empty`; a producer that
// installs one then claims, commits, fences and looks at the word. Lingering and the ring's give-
// back are unchanged. (S1)–(S3) become ScheduledUnit's R1–R3; `hasPendingWork` reads the
// word (not idle). A sequential actor's mailbox (its consumer is a task, not the unit),
// a standalone Mailbox and MNSerialExecutor's jobs keep the flag.
//
// ## Ring, then overflow (the full-ring policy: grow, never lose, never block)
// The ring (capacity slots, capacity − 1 usable) is allocated on the first enqueue, so an
// idle queue costs no ring; an owner that must report a failed allocation instead of
// trapping in a send calls reserveRing() (it throws) when it creates the queue.
// A producer that finds the ring full, or finds `overflowActive` set, takes the overflow
// path: under the overflow spin lock it re-checks the flag; if clear it retries the ring;
// otherwise (or if the ring is still full) it sets the flag and appends. The overflow list
// is a chain of chunks (OverflowChunk: a header and slots of `slotBytes`, 32 items in the
// first, doubling to 1,024); an append copies the item into the tail chunk's next slot,
// allocating a chunk only when the tail is full (`enqueueOverflow` inlines the common
// case, flag set and room in the tail; `enqueueSlow` is the rest). While the flag is set
// every producer appends, so a producer's later messages never overtake its earlier
// overflowed ones. The consumer drains, in this
// order: its private pending chain (OverflowList's `pendingChunk`), the ring, and only when the ring is *quiescent*
// (p_head == c_head: nothing claimed and uncommitted) the overflow list, which it takes
// whole (the chain's head) and clears the flag in the same critical section; it frees
// each chunk as soon as its last item is handed out: small chunks go back to malloc, full-size
// ones to OverflowChunkPool, which frees them at its second aging after (OverflowChunkPool.swift:
// one to two seconds while a scheduler's monitor runs). Why quiescent and not merely
// "dequeue found nothing": a producer may have claimed a ring slot, then (after its commit)
// appended its next message to the overflow; taking the overflow before that slot is
// committed would deliver the two out of order. With the quiescence check under the lock,
// any ring message committed later was claimed after the flag was cleared, so it is newer
// than everything taken. Per-producer FIFO therefore holds across ring and overflow.
// The lock is taken only on the overflow path (a full ring); the steady-state send is one
// ck_ring enqueue plus a plain load of the idle flag (see "Who runs the consumer").
// A specialised send (FastMailbox's cell `deliver`) first tries `enqueueOnRing`: the ring
// path and the append behind an active overflow (its lock taken only if free at once),
// with no call on the way, so the send needs almost no saved registers; when it declines
// (nothing copied) the full enqueue runs. Same steps, same orderings as above.
// `overflowAppends` counts overflow sends so a
// benchmark can show the hot path never took it.
//
// ## Lingering (drain(lingering: true): actor mailboxes)
// A consumer that empties the queue goes idle, and the next producer's claim schedules it
// again: a state-word transition, a run-queue put, often a steal or a wake-up on another
// worker, then a new turn. When a producer on another worker sends a stream (fan-in's
// sender inside one long turn), the consumer catches up, goes idle and is rescheduled
// every few messages, and two workers ran fan-in at 0.4× of one. So a lingering drain
// that has taken something this turn and finds nothing looks again, up to `lingerPolls`
// times with a `pause` between looks, before it goes idle — only while its worker has
// nothing else to run (Worker.currentMayLinger: a pool worker of a scheduler with two or
// more workers — a thread-local holding that worker's WorkerShared, which the drain reads
// inline — and this worker's next slot, local queue, the injection queue and the resumed
// queue empty; the drain looks at the next slot inline too, because in ping-pong and
// thread-ring the actor the turn just sent to waits there, and a call to find that out
// was 46 instructions per message at two workers; and not when an overflow
// is already active, which the drain could not take because a producer sits between
// claim and commit: that case goes to goIdle, which waits for the commit a bounded time
// — "Producers between claim and commit" — instead of lingering on it), so it never delays
// other runnable work on its worker, and never runs with one worker (or off the pool,
// or under the deterministic scheduler, or in the turns of a unit its worker took from
// another worker's next slot, until it goes idle: Worker.swift, "Long turns" — its
// producer is inside one long turn, and draining in batches beats chasing it). It is a
// delay before `goIdle`, nothing else: the idle protocol above is unchanged, and so are
// (S1)–(S3). A message that arrives
// during the lingering is taken in this turn, counted against the same `max`.
//
// ## Giving the ring back (a reclaimable queue: an actor cell's lazily allocated mailbox)
// model: Models/ring_reclaim.pml (seal, detach, stale producers, re-install, grace period)
// An idle actor that once got a message would otherwise keep its ring (~460 bytes for 32
// word slots) for ever. `releaseIdleRing()` gives it back; the next enqueue allocates a
// fresh one exactly as the first did. Only the consumer releases, in its own turn, right
// after a drain that returned `.empty` (the only consumer: ScheduledUnit runs one turn at
// a time; for a sequential actor, its body's task). Three steps:
//  1. Preconditions (consumer-local): a ring, no overflow active, no pending chunk.
//  2. Seal: one CAS of p_head from c_head to c_head + capacity (ckshim_ring_seal), "full"
//     for every claim. It succeeds only if p_head == c_head, i.e. nothing claimed and
//     nothing left. A producer's claim is a CAS on the same p_head, so exactly one
//     of the two wins (atomicity on one location: no fence needed, x86-64 or AArch64). A
//     producer that lost (or loads the ring later) sees "full" — its cached c_head too,
//     which is ≤ c_head — and takes the overflow path. The seal lost: a claim is in, its
//     item is coming, give up (the normal idle protocol delivers it).
//  3. Detach, under the overflow lock: overflowActive clear (else a producer that met the
//     sealed ring overflowed onto it first: unseal — p_head back to c_head, no claim can
//     have moved it — and give up), then store the ring-less word (release) into
//     `ringWord`: odd, carrying the taken count (`dequeuedCount` never goes back; the next
//     ring starts from it, written into the fresh block before the CAS that publishes it).
//     Every overflow-path append re-loads `ringWord` under the same lock (enqueueSlow,
//     `currentRingUnderLock`): after a detach it finds no ring and installs a fresh one
//     (recording the old one's item type), before the detach it finds the sealed ring and
//     appends to its overflow list, which the detach's re-check then sees. The inline
//     overflow append (`appendBehindActiveOverflow`, from `enqueueOverflow` and
//     `enqueueOnRing`) uses the producer's loaded ring only when
//     overflowActive is set and that ring has a tail chunk: a detached ring has neither
//     (a ring is detached with overflowActive clear, i.e. its chain empty, and no list is
//     ever made on it afterwards), so it falls through to enqueueSlow. Nothing else holds
//     a RawRing across the lock.
// Then the block (and its empty overflow list, whose append count the owner adds to its
// own total: `releaseIdleRing(overflowAppends:)`) goes to the ring epoch (RingEpoch.swift),
// which frees it once no thread can still read it: a producer that loaded the address
// before the detach (its failed claim, its c_head load, its overflow list look) and a
// statistics reader (approximateCount, dequeuedCount) hold a ring epoch section while they
// use it: pool workers always, other threads around each access to a reclaimable queue
// (the producer's test: one thread-local load; a cell's send takes such a thread through
// `deliverInSection`, FastMailbox). Producers of other queues pay nothing.
// The idle protocol: the release leaves consumerIdle alone. A producer that installs a
// fresh ring then claims, fences and loads the flag: the Dekker pair of "Who runs the
// consumer" with the install standing in for the claim. A drain that starts with no ring
// goes idle through goIdle(nil), which looks at `ringWord` again after its fence, so a
// ring installed meanwhile is seen (or its producer sees the flag). (S1)–(S3) hold as they
// are. Per-producer FIFO: everything in the old ring was taken before the seal; later
// items go to the fresh ring or, in order, to an overflow.
// Who asks: FastMailbox's ActorSystem.reclaimIdleMailboxes (an event actor's general turn;
// a sequential actor's body, the consumer there, before it parks).
//
// ## One object (an actor cell is its own mailbox queue)
// MPSCQueue is a ScheduledUnit subclass, open, with every member final, so that the unit
// that is a queue's single consumer can *be* the queue: FastMailbox's actor cells
// (AnyActorCell) subclass it, and a cell's mailbox queue is the cell itself. The queue's
// fields then lie inside the cell: spawning an actor allocates one object instead of two
// (a malloc and a free fewer per actor), and an idle actor carries no separate 40-byte
// queue. Nothing of the algorithm changes: the same fields, the same code (final: direct
// calls), the same orderings; only where the fields live. A standalone queue (an
// executor's job queue, a standalone Mailbox, a system queue) is never scheduled; its
// state word sits in the byte before the flags, so it costs nothing. The cell's own
// `deinit` runs before the queue's, which then destroys the messages nobody drained, as
// it did as a separate object released by the cell.
//
// ## Where the fields live (every idle actor carries them)
// The object holds only what an idle queue needs: the four one-byte flags (consumerIdle,
// closed, overflowActive, overflowLock), `reclaimable` and `signalsUnit`, sharing the first word after
// the header with ScheduledUnit's state byte, the shape (capacity, item bytes) and the ring
// word (the ring's address, or — odd — none and the taken count carried over): 40 bytes
// with the header. The rest exists once there is something to count or
// to release (ckshim.h, "What MPSCQueue keeps in its ring block"):
//  - the consumer's count of items taken (`dequeuedCount`) lives in the ring block beside
//    c_head, on the line only the consumer writes; with no ring, in `ringWord` (`word >> 1`);
//  - a ring given back keeps its ring epoch entry and the walker's snapshot of the taken
//    count (`ringIdleSinceLastLook`) in the header padding after the item type;
//  - the items' type (`MPSCQueueItemType`, 16 bytes: an existential metatype), for a
//    typed owner (FastMailbox's Mailbox, whose encoding conforms): written into the fresh
//    block by the thread that allocates the ring, before the CAS that publishes it
//    (release), through the `recording:` forms of enqueue / tryEnqueue / reserveRing, so
//    the typed owner pays nothing per item (the type is needed only on that cold path: no
//    ring, no items). Read only by deinit, after its acquire load of the block address
//    (x86-64: a plain load after the locked cmpxchg that published it; AArch64: the
//    release CAS's stlxr pairs with that ldar, so the type's plain stores are visible),
//    and deinit runs after the last reference is gone (the reference count's
//    release/acquire orders every producer's and consumer's work before it). It
//    destroys the items nobody drained with the recorded type: payloads are released
//    whoever drops the last reference. A queue whose ring was allocated by an untyped
//    form (words, pointers: MNSerialExecutor) records none, and its deinit leaves
//    undrained items alone, as ever;
//  - the overflow chain, the consumer's pending chain and their counts live in an
//    OverflowList, allocated by the first overflow append (under the overflow lock) and
//    published in the ring block (release, before `overflowActive` is set; the consumer
//    loads it with acquire); freed with the queue, or (empty) with a ring given back. Its producers' and consumer's parts are
//    on different cache lines (OverflowList.swift), as they were not inside this object
//    (the consumer's per-item pending index shared a line with the producers' flags).
//
// ## Producers between claim and commit (and preempted ones)
// A producer commits by publishing its own slot's ready mark (ckshim.h, "Ready marks"), so
// no producer ever waits for another: one preempted between claim and commit delays only
// the consumer, at that one slot. Later producers publish their own slots, fill the ring,
// then append to the ordered overflow, and return. The consumer finds the slot at c_head
// unpublished while the ring is not quiescent. goIdle sees the claim, keeps the turn (its
// CAS), and then waits for that commit in the turn (`waitForCommit`): up to `commitPolls`
// looks a `pause` apart, then, if the commit still has not landed (the producer was
// preempted) and its pool worker has nothing else to run, one sched_yield() so the
// producer can get a CPU back. Then drain returns `.more` and the caller runs it again
// later (an actor yields its worker rather than spinning on it); that turn finds what
// committed meanwhile. Rule: an item that is certain to come (its ticket is claimed) is
// waited for, briefly, by the turn that owns the consumer before that turn ends; a turn
// that ended at once would be followed by another that meets the same slot, each paying
// two read-modify-writes on the idle flag's line and keeping busy a CPU the preempted
// producer needs. The wait changes nothing of the idle protocol: it runs only after the
// consumer won the flag back (false: its turn runs), so (S1)–(S3) and the Dekker argument
// above hold as they are.
//
// ## Close
// markClosed() sets the closed bit; an enqueue that sees it is refused with .closed and the
// caller keeps its item. An enqueue that checked before the bit was set may still land
// after: it is counted, scheduled and drained like any other, so it is never lost (the
// actor layer turns post-close drains into dead letters).

import CConcurrencyKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The type of a queue's items, as a typed owner (FastMailbox's message encoding) records
/// it in the ring block when its enqueue allocates the ring ("Where the fields live", file
/// comment), so that the queue's deinit can destroy the items nobody drained.
@usableFromInline
package protocol MPSCQueueItemType {
    /// Moves the item at `item` (a ring or overflow slot of the queue's `itemBytes`) out and
    /// destroys it.
    static func destroyItem(at item: UnsafeMutableRawPointer)
}

/// The item type of the untyped forms of enqueue (words, pointers): nothing is recorded,
/// and the queue's deinit leaves undrained items as they are (their owner drains them).
@usableFromInline
package enum UntypedItems: MPSCQueueItemType {
    @inlinable package static func destroyItem(at item: UnsafeMutableRawPointer) {}
}

/// A multi-producer, single-consumer FIFO of 64-bit words on `ck_ring` with ordered
/// overflow. See the file comment for the algorithm and its invariants.
///
/// Thread-safety: `enqueue`, `isClosed`, `approximateCount` and `markClosed` from any thread;
/// `drain`, `close` and `closeAndTakeAll` only from the single consumer (one thread at a time, with a
/// happens-before edge between successive consumers, as a scheduler's run queue gives), and
/// never from inside a drain's `body`: drains do not nest (a drain keeps its place in the
/// pending overflow chunk, and whether any chunk is pending, in locals: `drain`).
///
/// A ``ScheduledUnit``, so that a unit that is the single consumer of one queue (an actor
/// cell, in FastMailbox) can be that queue: one object, one allocation (file comment, "One
/// object"). Every member is final and package-visible; outside the package the class
/// offers nothing to call and no initializer to subclass it with. A standalone queue is
/// never scheduled.
open class MPSCQueue: ScheduledUnit, @unchecked Sendable {
    /// What an enqueue did.
    @usableFromInline package enum EnqueueResult: Equatable, Sendable {
        /// Accepted; `becameNonEmpty` is true for exactly the enqueue that took the queue
        /// from idle to busy: its caller must get the consumer running.
        case accepted(becameNonEmpty: Bool)
        /// The queue is closed; the item was not taken.
        case closed
    }

    /// What a drain left behind.
    @usableFromInline package enum DrainOutcome: Equatable, Sendable {
        /// The queue went idle: the consumer must stop; the next `becameNonEmpty` (perhaps
        /// already reported) starts it again.
        case empty
        /// Items remain (or are still being committed): run the consumer again later.
        case more
    }

    /// See "Who runs the consumer" above. Producers read it and CAS true → false; the
    /// consumer stores true (seq_cst) when it runs out of work and may CAS it back.
    @usableFromInline let consumerIdle = Atomic<Bool>(true)

    /// Set once by markClosed (release); read by producers before inserting.
    @usableFromInline let closed = Atomic<Bool>(false)

    // (The four one-byte atomics, `reclaimable` and `signalsUnit` are declared together so that, with
    // ScheduledUnit's state byte before them, they share one word.)
    /// Set by a producer (under overflowLock) when it appends to the overflow list;
    /// cleared only by the consumer in the same critical section that takes the list.
    /// Producers read it (acquire) before trying the ring.
    @usableFromInline let overflowActive = Atomic<Bool>(false)

    /// The overflow spin lock: a flag taken by CAS (acquiring) and given back by a store
    /// (releasing), so ThreadSanitizer sees its happens-before edges and an idle queue
    /// carries no mutex allocation. Held only for an append or a swap of the list; how
    /// waiters wait is `lockOverflowContended`'s business.
    @usableFromInline let overflowLock = Atomic<Bool>(false)

    /// Whether the consumer may give the ring back ("Giving the ring back"): set by the
    /// owner at init (an actor cell's lazily allocated mailbox). Producers off a ring epoch
    /// section then enter one around their access; other queues never pay for it. In the
    /// word of the flags: the object stays 40 bytes.
    @usableFromInline package let reclaimable: Bool

    /// The queue is its own consumer, as a scheduled unit, and the unit's state word stands
    /// in for `consumerIdle` ("The unit as the idle flag", file comment): an enqueue reports
    /// `becameNonEmpty` when it finds the unit not due (idle or running), and its caller
    /// schedules the unit; a drain that runs dry returns `.empty` without touching the
    /// flag. Set at init (Shape); in the word of the flags.
    @usableFromInline package let signalsUnit: Bool

    // Shape, in 32 bits each, right after the flags: with them and the ring's address this
    // is the whole queue, 40 bytes with the object header ("Where the fields live" in the
    // file comment).
    /// Slots of the ring once allocated (validated power of two ≥ 4, at most 2^20).
    @usableFromInline let capacity32: UInt32
    /// Bytes of one item (see "Items"): 8 for a word queue, at most 64.
    @usableFromInline let itemBytes32: UInt32

    /// The ring: its block's address (even, nonzero), or — odd — no ring, with the
    /// consumer's count of items taken carried over in the upper bits (`word >> 1`: 0
    /// before the first ring; "Giving the ring back"). Installed by a CAS (release), read by
    /// everyone (acquire) so the initialised header is visible; only the consumer takes a
    /// ring away (release, under the overflow lock).
    @usableFromInline let ringWord = Atomic<UInt>(1)

    /// The ring block of `word`, nil when it holds none (odd).
    @inlinable @inline(__always)
    static func block(_ word: UInt) -> UnsafeMutableRawPointer? {
        word & 1 == 0 ? UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped : nil
    }

    /// The current ring block (acquire), nil when there is none. A thread that dereferences
    /// it for a reclaimable queue must be inside a ring epoch section, or be the consumer.
    @inlinable package final var ringBlock: UnsafeMutableRawPointer? { MPSCQueue.block(ringWord.load(ordering: .acquiring)) }

    /// Slots of the ring once allocated (validated power of two ≥ 4).
    @inlinable package final var capacity: Int { Int(capacity32) }
    /// Bytes of one item (see "Items"): 8 for a word queue.
    @inlinable package final var itemBytes: Int { Int(itemBytes32) }
    /// Bytes of one ring slot: itemBytes rounded up to a multiple of 8 (computed, not
    /// stored: every idle actor carries this object).
    @inlinable package final var slotBytes: Int { MPSCQueue.slotBytes(forItemBytes: itemBytes) }
    /// A slot's bytes for items of `itemBytes`: rounded up to a multiple of 8.
    @inlinable static func slotBytes(forItemBytes itemBytes: Int) -> Int { (itemBytes + 7) & ~7 }

    /// Items the consumer has taken out so far (kept in the ring block beside c_head: 0
    /// before the first enqueue). Written by the consumer only, per item, before the
    /// hand-off (a relaxed store: no read-modify-write); read by anyone. With
    /// `approximateCount` it gives how many items were ever accepted, for exact accounting
    /// at shutdown.
    package final var dequeuedCount: Int {
        readingRing { ring, word in ring?.takenCount ?? Int(truncatingIfNeeded: word >> 1) }
    }

    /// Runs `body` with the current ring (nil: none) and the word it came from, inside a
    /// ring epoch section when the queue is reclaimable and this thread is not in one
    /// already (statistics readers on any thread; RingEpoch.swift). Off the hot path.
    @inlinable
    final func readingRing<R>(_ body: (RawRing?, UInt) -> R) -> R {
        let enter = reclaimable && ckshim_epoch_depth() == 0
        if enter { ckshim_epoch_enter() }
        defer { if enter { ckshim_epoch_exit() } }
        let word = ringWord.load(ordering: .acquiring)
        return body(MPSCQueue.block(word).map(RawRing.init(block:)), word)
    }

    /// The overflow list, nil until the first overflow append (kept in the ring block).
    @inlinable final func overflowList(_ ring: RawRing) -> OverflowList? { ring.overflowListBase.map(OverflowList.init) }

    /// Creates an empty queue of `itemBytes`-byte items (1...RawRing.maximumSlotBytes;
    /// default: words). The ring of `capacity` slots (a power of two in
    /// 4...RawRing.maximumCapacity, i.e. 2^20) is allocated on the first enqueue, or by
    /// `reserveRing()`. `reclaimable`: the consumer may give the ring back while idle
    /// (`releaseIdleRing()`; file comment, "Giving the ring back").
    package convenience init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
        self.init(shape: try Shape(capacity: capacity, itemBytes: itemBytes, reclaimable: reclaimable))
    }

    /// Creates an empty queue of a validated shape: the designated initializer, which a
    /// subclass that is its own queue (an actor cell: "One object") calls. Inlinable: a
    /// spawn makes its cell inline in the caller's module (FastMailbox's ActorCellBase.init),
    /// and this is four stores there.
    @inlinable
    package init(shape: Shape) {
        self.capacity32 = shape.capacity32
        self.itemBytes32 = shape.itemBytes32
        self.reclaimable = shape.reclaimable
        self.signalsUnit = shape.signalsUnit
        super.init()
    }

    /// A queue's validated shape: the capacity of its ring, the size of its items and
    /// whether the ring may be given back (see `init(capacity:itemBytes:reclaimable:)`).
    /// Made before the queue, so that an owner that is its own queue (an actor cell) can
    /// report a bad capacity before it exists.
    @usableFromInline package struct Shape: Sendable {
        @usableFromInline let capacity32: UInt32
        @usableFromInline let itemBytes32: UInt32
        @usableFromInline let reclaimable: Bool
        /// The queue's consumer is the queue itself, as a scheduled unit, and its state word
        /// stands in for the idle flag ("The unit as the idle flag", file comment).
        @usableFromInline package private(set) var signalsUnit = false

        /// Validates `capacity` (a power of two in 4...RawRing.maximumCapacity); traps on an
        /// `itemBytes` outside 1...RawRing.maximumSlotBytes (a programming error).
        /// Inlinable (with RawRing.validate and ActorSystem.queueShape): a spawn's shape, of
        /// a constant capacity and item size, is then checked at compile time (out of line,
        /// ~40 instructions a spawn).
        @inlinable
        package init(capacity: Int, itemBytes: Int = 8, reclaimable: Bool = false) throws(RingCapacityError) {
            try RawRing.validate(capacity: capacity)
            precondition(itemBytes >= 1 && itemBytes <= RawRing.maximumSlotBytes,
                         "MPSCQueue: items of \(itemBytes) bytes (1...\(RawRing.maximumSlotBytes))")
            capacity32 = UInt32(truncatingIfNeeded: capacity)
            itemBytes32 = UInt32(truncatingIfNeeded: itemBytes)
            self.reclaimable = reclaimable
        }

        /// Slots of the ring once allocated.
        @inlinable package var capacity: Int { Int(capacity32) }

        /// This shape for a queue whose single consumer is the queue itself, scheduled as a
        /// unit (FastMailbox's event-actor cells): its state word stands in for the idle
        /// flag ("The unit as the idle flag", file comment).
        @inlinable package func signallingUnit() -> Shape {
            var shape = self
            shape.signalsUnit = true
            return shape
        }

        /// The smallest shape (4 word slots), for a subclass that never uses its queue
        /// (FastMailbox's pool router): no ring is ever allocated for it.
        package static var unused: Shape { Shape(capacity32: 4, itemBytes32: 8, reclaimable: false) }

        private init(capacity32: UInt32, itemBytes32: UInt32, reclaimable: Bool) {
            self.capacity32 = capacity32
            self.itemBytes32 = itemBytes32
            self.reclaimable = reclaimable
        }
    }

    deinit {
        if let block = ringBlock {
            let ring = RawRing(block: block)
            // A typed queue destroys what nobody drained (payloads of messages left at a
            // shutdown, or in a mailbox dropped while full); no producer can be between
            // claim and commit now, so one drain takes everything.
            if let itemType = ring.itemType {
                _ = drain(max: Int.max, taking: { itemType.destroyItem(at: $0) }, { _ in })
            }
            // With any chunks of items nobody drained (an untyped owner drains what it must release first).
            overflowList(ring)?.deallocate()
            ring.deallocate()
        }
    }

    // MARK: producers

    /// The ring, allocating it on first use (racing producers: one CAS wins, losers free
    /// theirs) with `Items` recorded as the item type ("Where the fields live"). `Items`
    /// is needed only in the out-of-line allocation, so an unspecialised caller looks up
    /// no metadata per item.
    @inlinable @inline(__always)
    final func ring<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        let word = ringWord.load(ordering: .acquiring)
        // One test: a ring's address is even and nonzero, "no ring" is odd.
        if _fastPath(word & 1 == 0) { return RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped) }
        return allocateRing(recording: items)
    }

    /// The ring, allocating it with no item type recorded (tests that play a producer).
    @inlinable final var ring: RawRing { ring(recording: UntypedItems.self) }

    /// The lazy allocation of the first enqueue. A failure here cannot be reported (a send
    /// does not throw), so it traps naming the size: an owner that must survive it calls
    /// `reserveRing()` first, where the failure is a thrown error.
    @usableFromInline @inline(never)
    final func allocateRing<Items: MPSCQueueItemType>(recording items: Items.Type) -> RawRing {
        do {
            return try installRing(itemType: items)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Allocates the ring now unless it exists, so that no later enqueue allocates (or can
    /// fail to). Any thread; idempotent. Throws, leaving the queue usable and ring-less,
    /// when the memory cannot be had (the ring is capacity × (slot bytes + 8) plus a header).
    package final func reserveRing() throws(RingAllocationError) {
        try reserveRing(recording: UntypedItems.self)
    }

    /// `reserveRing()` for a typed owner: records `items` as the item type.
    package final func reserveRing<Items: MPSCQueueItemType>(recording items: Items.Type) throws(RingAllocationError) {
        if ringBlock != nil { return }
        _ = try installRing(itemType: items)
    }

    /// Allocates a ring, records the item type in it (nil for `UntypedItems`) and the
    /// taken count carried over from a ring given back, and publishes it; racing callers:
    /// one CAS wins, losers free theirs. Returns the ring installed (a racing winner's).
    /// Inlined into its three callers (allocateRing, the first enqueue's, is one call less);
    /// the shape was validated when the queue was made, so the ring's init does not check
    /// it again.
    @inline(__always)
    private final func installRing(itemType: any MPSCQueueItemType.Type) throws(RingAllocationError) -> RawRing {
        var word = ringWord.load(ordering: .acquiring)
        if let block = MPSCQueue.block(word) { return RawRing(block: block) }
        let fresh = try RawRing(tryMailboxCapacity: capacity, slotBytes: slotBytes)
        // Before the publishing CAS. (An identity test: a dynamic cast cost ~24 instructions a ring.)
        fresh.itemType = ObjectIdentifier(itemType) == ObjectIdentifier(UntypedItems.self) ? nil : itemType
        while true {
            fresh.takenCount = Int(truncatingIfNeeded: word >> 1)  // the count goes on ("Giving the ring back")
            let (won, current) = ringWord.compareExchange(
                expected: word, desired: UInt(bitPattern: fresh.block),
                successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if won { return fresh }
            if let block = MPSCQueue.block(current) {
                fresh.deallocate()
                return RawRing(block: block)
            }
            word = current  // ring-less still: another count (a ring came and went)
        }
    }

    /// The overflow path's ring, under the overflow lock: the current one, or — the one the
    /// producer loaded was given back ("Giving the ring back") — a fresh one, recording the
    /// item type the old one recorded (a producer holds the old block inside its section).
    final func currentRingUnderLock(replacing old: RawRing) -> RawRing {
        if let block = ringBlock { return RawRing(block: block) }
        do {
            return try installRing(itemType: old.itemType ?? UntypedItems.self)
        } catch {
            fatalError("MPSCQueue: \(error); call reserveRing() where the failure can be reported")
        }
    }

    /// Enqueues the `itemBytes` bytes at `source` from any thread (a bitwise copy: on
    /// `.accepted` the queue owns the item and the caller must treat `source` as moved
    /// from; on `.closed` nothing was copied). Lock-free unless the ring is full (then one
    /// short critical section appends to the ordered overflow). Never fails for lack of space.
    @inlinable @inline(__always)
    package final func enqueue(moving source: UnsafeRawPointer) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: UntypedItems.self)
    }

    /// `enqueue(moving:)` for a typed owner: an enqueue that allocates the ring records
    /// `items` as the item type ("Where the fields live").
    @inlinable @inline(__always)
    package final func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult {
        enqueue(moving: source, itemBytes: itemBytes, recording: items)
    }

    /// `enqueue(moving:recording:)` for a caller that knows the item size statically (a send
    /// specialised for its message type): the copy into the slot is then a fixed sequence
    /// of word moves instead of a switch on the queue's `itemBytes`. `itemBytes` must be
    /// this queue's.
    @inlinable @inline(__always)
    package final func enqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                   recording items: Items.Type) -> EnqueueResult {
        assert(itemBytes == self.itemBytes, "enqueue of \(itemBytes)-byte items into a queue of \(self.itemBytes)-byte items")
        if closed.load(ordering: .relaxed) { return .closed }
        // A thread outside a ring epoch section (not a pool worker) sending to a queue
        // whose ring may be given back enters one (RingEpoch.swift): one TLS load here.
        if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes) { return result }
        return enqueueAllocatingRing(moving: source, itemBytes: itemBytes, recording: items)
    }

    /// `enqueueIfRing`, inside a ring epoch section when this thread is outside one (not a
    /// pool worker) and the queue's ring may be given back (RingEpoch.swift): one TLS load.
    @inlinable @inline(__always)
    final func enqueueIfRingInSectionIfNeeded(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        _slowPath(ckshim_epoch_depth() == 0) && reclaimable
            ? enqueueInSection(moving: source, itemBytes: itemBytes)
            : enqueueIfRing(moving: source, itemBytes: itemBytes)
    }

    /// The enqueue that found no ring (the first, or one after the ring was given back):
    /// allocates one recording `Items`, then inserts. Out of line and reached by one call
    /// site: the item type's metadata is then looked up only here. (In a loop, or used
    /// twice, the look-up was hoisted onto every unspecialised send: +340 instructions per
    /// sequential message.)
    @inlinable @inline(never)
    final func enqueueAllocatingRing<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, itemBytes: Int,
                                                          recording items: Items.Type) -> EnqueueResult {
        while true {
            _ = allocateRing(recording: items)
            // The ring may be given back again before the insert: then once more.
            if let result = enqueueIfRingInSectionIfNeeded(moving: source, itemBytes: itemBytes) { return result }
        }
    }

    /// `enqueueIfRing` for a thread outside a ring epoch section: inside one. Out of line
    /// (pool workers never come here) and not generic (see `enqueue`).
    @usableFromInline @inline(never)
    final func enqueueInSection(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        ckshim_epoch_enter()
        defer { ckshim_epoch_exit() }
        return enqueueIfRing(moving: source, itemBytes: itemBytes)
    }

    /// The insert of an enqueue into the queue's ring (or its overflow) and the idle-flag
    /// claim; nil, with nothing done, when the queue has no ring.
    @inlinable @inline(__always)
    final func enqueueIfRing(moving source: UnsafeRawPointer, itemBytes: Int) -> EnqueueResult? {
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(self)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }
        return insert(moving: source, itemBytes: itemBytes, into: RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped))
    }

    /// The insert into `ring` (the queue's, just loaded): the ring, or the overflow; then
    /// the idle-flag claim.
    @inlinable @inline(__always)
    final func insert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing) -> EnqueueResult {
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(self)
        #endif
        if !overflowActive.load(ordering: .acquiring), ringInsert(moving: source, itemBytes: itemBytes, into: ring) {
            ckshim_fence_atomic_load()  // the ticket CAS before the flag load (free on x86)
        } else if !enqueueOverflow(source: source, ring: ring, itemBytes: itemBytes) {
            // The append that set overflowActive (or used the ring): its Dekker fence. An
            // append behind an already active overflow needs none ("Who runs the consumer").
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
        return .accepted(becameNonEmpty: claimConsumer())
    }

    /// True when a send from this thread must enter a ring epoch section first: the thread
    /// is in none (not a pool worker) and the queue's ring may be given back (RingEpoch.swift).
    @inlinable package final var sendNeedsSection: Bool { _slowPath(ckshim_epoch_depth() == 0) && reclaimable }

    /// The ring path of `enqueue(moving:itemBytes:recording:)` alone, for a specialised send
    /// that does everything else out of line (its common case then needs no callee-saved
    /// registers): `becameNonEmpty` when the item went into the ring; nil, with nothing
    /// copied, when the queue is closed, has no ring yet, has an overflow in use or a full
    /// ring — the caller then makes the full enqueue. `itemBytes` must be this queue's. The
    /// caller is inside a ring epoch section unless `sendNeedsSection` is false.
    /// `signallingUnit`: the caller knows the queue signals its unit (`signalsUnit`), so the
    /// claim is the state word's look alone, without testing the flag.
    @inlinable @inline(__always)
    package final func enqueueOnRing(moving source: UnsafeRawPointer, itemBytes: Int, signallingUnit: Bool = false) -> Bool? {
        assert(!signallingUnit || signalsUnit, "enqueueOnRing(signallingUnit: true) on a queue that keeps its idle flag")
        assert(!sendNeedsSection, "enqueueOnRing outside a ring epoch section on a reclaimable queue")
        if closed.load(ordering: .relaxed) { return nil }
        #if DEBUG
        MPSCQueueTestHook.pauseIfArmed(self)
        #endif
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return nil }  // no ring yet, or given back
        let ring = RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped)
        #if DEBUG
        MPSCQueueTestHook.claimIfArmed(self)
        #endif
        if overflowActive.load(ordering: .acquiring) {
            // enqueueOverflow's inline case, with the lock taken only if it is free at once.
            guard overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return nil }
            let appended = appendBehindActiveOverflow(source: source, ring: ring, itemBytes: itemBytes)
            overflowLock.store(false, ordering: .releasing)
            // Behind an active overflow: no fence before the flag load ("Who runs the consumer").
            return appended ? claimConsumer(signallingUnit: signallingUnit) : nil
        }
        guard ringInsert(moving: source, itemBytes: itemBytes, into: ring) else { return nil }
        ckshim_fence_atomic_load()  // the ticket CAS before the flag load (free on x86)
        return claimConsumer(signallingUnit: signallingUnit)
    }

    /// The ring half of every insert: claims a slot of `ring`, copies the item in and
    /// publishes it (ckshim.h, "Ready marks"). False, with nothing copied, when the ring is
    /// full (or sealed). The caller owes the fence before its idle-flag load.
    @inlinable @inline(__always)
    final func ringInsert(moving source: UnsafeRawPointer, itemBytes: Int, into ring: RawRing) -> Bool {
        var ticket: UInt32 = 0
        guard let slot = ring.reserveMultiProducer(slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes), ticket: &ticket) else {
            return false
        }
        MPSCQueue.copyItem(to: slot, from: source, byteCount: itemBytes)
        #if DEBUG
        MPSCQueueTestHook.publishIfArmed(self)
        #endif
        ring.publishMultiProducer(slot: slot, ticket: ticket)
        return true
    }

    /// The full-ring path, with its common case inline: the overflow is already in use
    /// and its tail chunk has room, so the item is copied (its size a constant in a
    /// specialised send) into the next slot under the lock. Exactly what `enqueueSlow`
    /// does in that case; everything else is `enqueueSlow`. True for that common case: the
    /// item went behind an overflow that was already active under the lock, so the caller
    /// owes no store→load fence before its flag load ("Who runs the consumer", file comment).
    @inlinable @inline(__always)
    final func enqueueOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
        lockOverflow()
        if appendBehindActiveOverflow(source: source, ring: ring, itemBytes: itemBytes) {
            overflowLock.store(false, ordering: .releasing)
            return true
        }
        enqueueSlow(source: source, ring: ring)
        return false
    }

    /// Under the overflow lock: when the overflow is already active and its tail chunk has
    /// room, copies the item into the tail's next slot and returns true; else does nothing.
    @inlinable @inline(__always)
    final func appendBehindActiveOverflow(source: UnsafeRawPointer, ring: RawRing, itemBytes: Int) -> Bool {
        guard overflowActive.load(ordering: .relaxed), let list = overflowList(ring), let tailBase = list.tail else { return false }
        let tail = OverflowChunk(tailBase)
        let index = tail.count
        guard index < tail.capacity else { return false }
        MPSCQueue.copyItem(to: tail.slot(index, slotBytes: MPSCQueue.slotBytes(forItemBytes: itemBytes)), from: source, byteCount: itemBytes)
        tail.count = index + 1
        list.appendCount = list.appendCount &+ 1
        return true
    }

    /// Enqueues `word` (a word queue's item) from any thread; see `enqueue(moving:)`.
    @inlinable @inline(__always)
    package final func enqueue(word: UInt) -> EnqueueResult {
        assert(itemBytes == 8, "enqueue(word:) on a queue of \(itemBytes)-byte items")
        var word = word
        return enqueue(moving: &word)
    }

    /// Copies an item into a slot or box: whole words for the usual sizes (a multiple of 8,
    /// at most 32 bytes); for other sizes up to 32 the words up to the last whole one plus
    /// one more word ending at the item's last byte (overlapping: never a byte outside the
    /// item, which may be exactly `byteCount` long), and two overlapping 4-, 2- or 1-byte
    /// pieces below 8 bytes; memmove above 32. Cheaper than a call to memmove per message
    /// (an enum of a one-word payload and an Int is 9 bytes).
    @inlinable @inline(__always)
    static func copyItem(to destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, byteCount: Int) {
        @inline(__always) func piece<T: FixedWidthInteger>(_ offset: Int, _: T.Type) {
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: offset, as: T.self),
                                   toByteOffset: offset, as: T.self)
        }
        @inline(__always) func word(_ offset: Int) { piece(offset, UInt64.self) }
        switch byteCount {
        case 8: word(0)
        case 16: word(0); word(8)
        case 24: word(0); word(8); word(16)
        case 32: word(0); word(8); word(16); word(24)
        case 9...15: word(0); word(byteCount - 8)
        case 17...23: word(0); word(8); word(byteCount - 8)
        case 25...31: word(0); word(8); word(16); word(byteCount - 8)
        case 4...7: piece(0, UInt32.self); piece(byteCount - 4, UInt32.self)
        case 2...3: piece(0, UInt16.self); piece(byteCount - 2, UInt16.self)
        case 1: piece(0, UInt8.self)
        default: destination.copyMemory(from: source, byteCount: byteCount)
        }
    }

    /// The producer side of the idle flag: true for the one caller that took it from idle.
    /// A queue that signals its unit: true when the unit is not due (idle or running), one
    /// plain load ("The unit as the idle flag"); `signallingUnit`: the caller knows it does.
    @inlinable @inline(__always)
    final func claimConsumer(signallingUnit: Bool = false) -> Bool {
        if signallingUnit || signalsUnit { return !isDue }
        return consumerIdle.load(ordering: .relaxed)
            && consumerIdle.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
    }

    /// For an owner that keeps producers waiting outside the queue (a bounded mailbox's
    /// waiting senders): after the waiter is recorded where the consumer's turn looks,
    /// makes sure such a turn follows. True when the caller took the consumer from idle
    /// and must schedule it. The fence gives the producer's half of the Dekker pair of
    /// "Who runs the consumer" (file comment), with the waiter record in place of an item.
    package final func claimConsumerForWaiter() -> Bool {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return claimConsumer()
    }

    /// Ring-only enqueue (see `enqueue(moving:)`): refuses instead of overflowing.
    /// Returns nil when the ring is full or the overflow is in use (nothing was copied:
    /// the caller keeps its item and may retry) — on a reclaimable queue also while the
    /// consumer gives the ring back (sealed), so an owner that takes nil for "full" (a
    /// bounded mailbox) does not make its queue reclaimable.
    @inlinable @inline(__always)
    package final func tryEnqueue(moving source: UnsafeRawPointer) -> EnqueueResult? {
        tryEnqueue(moving: source, recording: UntypedItems.self)
    }

    /// `tryEnqueue(moving:)` for a typed owner (see `enqueue(moving:recording:)`).
    @inlinable @inline(__always)
    package final func tryEnqueue<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult? {
        if closed.load(ordering: .relaxed) { return .closed }
        // Outside a ring epoch section, on a reclaimable queue: inside one (RingEpoch.swift).
        let entered = _slowPath(ckshim_epoch_depth() == 0) && reclaimable
        if entered { ckshim_epoch_enter() }
        defer { if entered { ckshim_epoch_exit() } }
        return tryEnqueueInsert(moving: source, recording: items)
    }

    /// The insert of `tryEnqueue`: the ring only (see `insert`).
    @inlinable @inline(__always)
    final func tryEnqueueInsert<Items: MPSCQueueItemType>(moving source: UnsafeRawPointer, recording items: Items.Type) -> EnqueueResult? {
        let ring = self.ring(recording: items)
        guard !overflowActive.load(ordering: .acquiring),
              ringInsert(moving: source, itemBytes: itemBytes, into: ring) else { return nil }
        ckshim_fence_atomic_load()
        return .accepted(becameNonEmpty: claimConsumer())
    }

    /// Word form of `tryEnqueue(moving:)`.
    @inlinable @inline(__always)
    package final func tryEnqueue(word: UInt) -> EnqueueResult? {
        assert(itemBytes == 8, "tryEnqueue(word:) on a queue of \(itemBytes)-byte items")
        var word = word
        return tryEnqueue(moving: &word)
    }

    /// The full-ring path (file comment, "Ring, then overflow"), entered with the overflow
    /// lock held (taken by `enqueueOverflow`), which it gives back: the ring once more if
    /// no overflow is pending, else an append: a copy into the tail chunk's next slot (a
    /// new chunk when the tail is full).
    @usableFromInline @inline(never)
    final func enqueueSlow(source: UnsafeRawPointer, ring loaded: RawRing) {
        defer { overflowLock.store(false, ordering: .releasing) }
        // The ring the producer loaded may have been given back (sealed: its claim failed
        // as "full"): the lock orders this load after the detach ("Giving the ring back").
        let ring = reclaimable ? currentRingUnderLock(replacing: loaded) : loaded
        if !overflowActive.load(ordering: .relaxed), ringInsert(moving: source, itemBytes: itemBytes, into: ring) { return }
        let list = overflowList(ring) ?? makeOverflowList(ring)
        overflowActive.store(true, ordering: .releasing)
        var chunk = list.tail.map(OverflowChunk.init)
        if chunk == nil || chunk!.count == chunk!.capacity { chunk = appendOverflowChunk(to: list, after: chunk) }
        let tail = chunk.unsafelyUnwrapped
        let index = tail.count
        MPSCQueue.copyItem(to: tail.slot(index, slotBytes: slotBytes), from: source, byteCount: itemBytes)
        tail.count = index + 1
        list.appendCount = list.appendCount &+ 1
    }

    /// The queue's first overflow append: its overflow list, published in the ring block
    /// (release) before `overflowActive` is set. Under overflowLock.
    @inline(never)
    final func makeOverflowList(_ ring: RawRing) -> OverflowList {
        let list = OverflowList.allocate()
        ring.overflowListBase = list.base
        return list
    }

    /// A new tail chunk (twice the last one's size, up to the maximum). Under overflowLock.
    @inline(never)
    final func appendOverflowChunk(to list: OverflowList, after tail: OverflowChunk?) -> OverflowChunk {
        let capacity = tail.map { Swift.min($0.capacity * 2, OverflowChunk.maximumCapacity) } ?? OverflowChunk.firstCapacity
        let fresh = OverflowChunk.allocate(capacity: capacity, slotBytes: slotBytes)
        if let tail { tail.next = fresh.base } else { list.head = fresh.base }
        list.tail = fresh.base
        return fresh
    }

    /// Pointer convenience for `enqueue(word:)`.
    @inlinable @inline(__always)
    package final func enqueue(_ pointer: UnsafeMutableRawPointer) -> EnqueueResult {
        enqueue(word: UInt(bitPattern: pointer))
    }

    // MARK: consumer

    /// Hands up to `max` items, in FIFO order per producer, to `body`. `take` moves each
    /// item out of its `itemBytes` bytes (a ring slot, freed as soon as it returns, or an
    /// overflow chunk's slot, freed with its chunk once its last item was handed out); then
    /// `body` gets the item. Consumer only, never from inside `body` (drains do not nest). No atomic
    /// read-modify-write per item: ring peeks and releases only, plus the idle protocol
    /// (one seq_cst store and a look) when the queue runs dry.
    @inlinable @inline(__always)
    package final func drain<Item>(max: Int, lingering: Bool = false, taking take: (UnsafeMutableRawPointer) -> Item,
                             _ body: (Item) -> Void) -> DrainOutcome {
        drain(max: max, lingering: lingering, itemBytes: itemBytes, taking: take, body)
    }

    /// `drain(max:lingering:taking:_:)` for a caller that knows the item size statically (a
    /// turn specialised for its message type): the slot addresses are then computed with a
    /// constant instead of a load and a multiplication per item. `itemBytes` must be this
    /// queue's.
    /// `signallingUnit`: the caller knows the queue signals its unit (`signalsUnit`: an
    /// event actor's cell), so going idle is `runDry` without testing the flag.
    @inlinable @inline(__always)
    package final func drain<Item>(max: Int, lingering: Bool = false, itemBytes: Int, signallingUnit: Bool = false,
                             taking take: (UnsafeMutableRawPointer) -> Item, _ body: (Item) -> Void) -> DrainOutcome {
        assert(itemBytes == self.itemBytes, "drain of \(itemBytes)-byte items from a queue of \(self.itemBytes)-byte items")
        assert(!signallingUnit || signalsUnit, "drain(signallingUnit: true) of a queue that keeps its idle flag")
        let slotBytes = MPSCQueue.slotBytes(forItemBytes: itemBytes)
        let word = ringWord.load(ordering: .acquiring)
        guard _fastPath(word & 1 == 0) else { return signallingUnit ? runDry(nil) : goIdle(nil) }
        let ring = RawRing(block: UnsafeMutableRawPointer(bitPattern: word).unsafelyUnwrapped)
        var taken = 0
        while taken < max {
            // The consumer's pending overflow items first: every ring item still waiting was
            // claimed after they were taken ("Ring, then overflow").
            if let list = overflowList(ring), _slowPath(list.pendingChunk != nil) {
                handOutPending(list, OverflowChunk(list.pendingChunk.unsafelyUnwrapped), ring: ring, taken: &taken,
                               max: max, slotBytes: slotBytes, take, body)
                continue
            }
            // Then the ring, with no look at the pending chain per item: it stays empty until
            // this drain's own takeOverflowIfQuiescent fills it (only the consumer does, and
            // `body` never drains this queue: its consumer's drains do not nest).
            var head = ring.consumerHeadSingleConsumer  // this consumer's own index
            var next = ring.peekSingleConsumer(at: head, slotBytes: slotBytes)
            while let slot = next {
                let item = take(slot)
                head &+= 1
                ring.releaseSingleConsumer(to: head)
                // Counted before the hand-off (one writer: a relaxed load and store, no RMW),
                // so a turn stuck inside `body` has its item counted as taken.
                ring.takenCount = ring.takenCount &+ 1
                body(item)
                taken &+= 1  // ≤ max
                if taken == max { return .more }
                next = ring.peekNextSingleConsumer(at: head, slotBytes: slotBytes)
            }
            if overflowActive.load(ordering: .acquiring), takeOverflowIfQuiescent(ring) {
                continue
            } else if lingering, taken > 0, let worker = ckshim_linger_get(), WorkerShared.nextSlotIsEmpty(worker),
                      lingerForMore(ring) {
                continue  // something arrived while the drain looked again ("Lingering")
            } else {
                return signallingUnit ? runDry(ring) : goIdle(ring)
            }
        }
        return .more
    }

    /// Most empty looks a lingering drain makes before it goes idle ("Lingering", file
    /// comment): with a `pause` between looks, about a microsecond or two.
    @usableFromInline static let lingerPolls = 64

    /// The lingering looks ("Lingering", file comment): up to `lingerPolls` looks, a
    /// `pause` apart, for a committed ring entry or an overflow, while this worker has
    /// nothing else to run. True when something arrived (the drain goes on), false when the
    /// drain should go idle. Consumer only, on a thread where ckshim_linger_get() is set.
    @usableFromInline @inline(never)
    final func lingerForMore(_ ring: RawRing) -> Bool {
        // An overflow already active is one the drain could not take (the ring is not
        // quiescent: a producer between claim and commit): looking again would find it at
        // once, every time, and spin on that producer without bound: goIdle's bounded
        // `waitForCommit` handles it instead.
        guard !overflowActive.load(ordering: .acquiring), Worker.currentHasNothingElseToRun() else { return false }
        for _ in 0..<MPSCQueue.lingerPolls {
            #if DEBUG
            MPSCQueueTestHook.lingerIfArmed(self)
            #endif
            ckshim_stall()
            if ring.headIsReadySingleConsumer(slotBytes: slotBytes)
                || overflowActive.load(ordering: .acquiring) {
                return true
            }
        }
        return false
    }

    /// Hands out a run of pending items of `chunk` (the first pending chunk) from
    /// `pendingIndex` on: the rest of the chunk, or `max` − `taken` items if fewer (≥ 1
    /// either way), adding the run's length to `taken`; frees the chunk once its last item
    /// is handed out (after that item's `body`: `endPendingRun`, one test per run instead
    /// of one per item). The drain's inner loop over one chunk: the run's length is known
    /// at its start (no `body` ends a drain early) and the chunk's count is final
    /// (producers append only to chunks they still hold, "Ring, then overflow"), so the
    /// loop keeps a slot pointer and the run's end where the drain's loop reloaded the
    /// list, the chunk, its count and the index after every `body`. Each item is counted (`handedOut`,
    /// `takenCount`: read by other threads) before its hand-off, as in the drain.
    /// `pendingIndex`, read by this consumer's drains alone, is moved past the run when the
    /// run starts: `body` never drains this queue (its consumer's drains do not nest), so
    /// no reader sees it before the run's last item is out.
    @inlinable @inline(__always)
    final func handOutPending<Item>(_ list: OverflowList, _ chunk: OverflowChunk, ring: RawRing, taken: inout Int,
                              max: Int, slotBytes: Int, _ take: (UnsafeMutableRawPointer) -> Item,
                              _ body: (Item) -> Void) {
        let index = list.pendingIndex
        let run = Swift.min(chunk.count &- index, max &- taken)  // ≥ 1: a chunk is freed with its last item
        list.pendingIndex = index &+ run
        var slot = chunk.slot(index, slotBytes: slotBytes)
        let end = taken &+ run  // ≤ max
        repeat {
            let item = take(slot)
            slot += slotBytes
            // The list from the ring again: one load, and no value of its own kept across `body`.
            let list = overflowList(ring).unsafelyUnwrapped
            list.handedOut = list.handedOut &+ 1
            ring.takenCount = ring.takenCount &+ 1  // before the hand-off (see drain)
            body(item)
            taken &+= 1
        } while taken != end
        endPendingRun(ring)
    }

    /// After a run of `handOutPending`: frees the first pending chunk if the run handed out
    /// its last item (`pendingIndex` at its count). Out of line (once per run). Consumer only.
    @usableFromInline @inline(never)
    final func endPendingRun(_ ring: RawRing) {
        let list = overflowList(ring).unsafelyUnwrapped
        let chunk = OverflowChunk(list.pendingChunk.unsafelyUnwrapped)
        if list.pendingIndex == chunk.count { releasePendingChunk(list, chunk) }
    }

    /// Word form of `drain(max:taking:_:)` (a queue of 8-byte items).
    @inlinable
    package final func drain(max: Int, _ body: (UInt) -> Void) -> DrainOutcome {
        drain(max: max, taking: { $0.load(as: UInt.self) }, body)
    }

    /// A pending chunk is used up: give it up at once and go on with the next. A small
    /// chunk goes back to malloc; a full-size one to OverflowChunkPool, which frees it at
    /// its second aging after (one to two seconds while a scheduler's monitor runs).
    /// Consumer only.
    @usableFromInline @inline(never)
    final func releasePendingChunk(_ list: OverflowList, _ chunk: OverflowChunk) {
        list.pendingChunk = chunk.next
        list.pendingIndex = 0
        chunk.deallocate()
    }

    /// The consumer side of the idle flag (see the file comment). Consumer only, from
    /// `drain` once it found nothing to take: its private pending chain is then empty (drain
    /// hands that out first, and only the consumer fills it), so only the producers' side
    /// — a claimed ring slot, an active overflow — is looked at again. Inlined into the
    /// drain (a store, two loads, no frame); its other outcome, `keepTurn`, is out of line.
    @inlinable @inline(__always)
    final func goIdle(_ ring: RawRing?) -> DrainOutcome {
        assert(ring.flatMap(overflowList)?.pendingChunk == nil, "goIdle with overflow items pending")
        if signalsUnit { return runDry(ring) }
        consumerIdle.store(true, ordering: .sequentiallyConsistent)
        #if !arch(x86_64)
        // Store→load barrier before the p_head load (file comment): `dmb ish` on AArch64.
        // On x86-64 the seq_cst store (xchg) already is one.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        #endif
        if let ring {
            if ring.isQuiescent && !overflowActive.load(ordering: .sequentiallyConsistent) { return .empty }
            return keepTurn(ring)
        }
        // No ring when the drain looked: look again after the fence, for one a producer
        // installed since (the install stands in for the ticket claim in the Dekker pair:
        // a producer installs, claims, fences, then reads the flag). A queue whose ring was
        // given back meets this on every turn until its next send.
        guard let block = ringBlock else { return .empty }
        return keepTurn(RawRing(block: block))
    }

    /// goIdle of a queue that signals its unit ("The unit as the idle flag", file comment):
    /// no flag to store. `.empty` when nothing is claimed (a producer that claims later
    /// sees the unit running or idle, and schedules it); otherwise an item is certain to
    /// come whose producer may have seen the unit due and left it alone, so the turn waits
    /// for the commit (`waitForCommit`) and returns `.more`. No `overflowActive` test: the
    /// drain calling this has looked at the flag in this turn and taken any overflow it
    /// found on a quiescent ring, so one active now either has a claimed slot beside it
    /// (not quiescent: the turn is kept) or was set after that look, by a producer whose
    /// fenced look at the word finds the turn running or idle (file comment). Without a
    /// ring, `.empty`: a producer that installs one then claims, commits and looks at the
    /// state word. Consumer only, from `drain`.
    @inlinable @inline(__always)
    final func runDry(_ ring: RawRing?) -> DrainOutcome {
        guard let ring else { return .empty }
        if ring.isQuiescent { return .empty }
        return keepUnitTurn(ring)
    }

    /// runDry found a claimed slot or an overflow it could not take: waits for the commit
    /// and keeps the turn (see runDry). Out of line. Consumer only.
    @usableFromInline @inline(never)
    final func keepUnitTurn(_ ring: RawRing) -> DrainOutcome {
        if !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// goIdle found work arriving (a claimed slot, or overflow): keeps the turn unless a
    /// producer has already taken it over (it schedules the next turn). A claimed,
    /// uncommitted slot's item is certain to come: the kept turn waits for its commit
    /// (`waitForCommit`), so the next turn finds it ("Producers between claim and commit").
    /// Out of line: goIdle's common path, going idle, stays as short as it was. Consumer only.
    @usableFromInline @inline(never)
    final func keepTurn(_ ring: RawRing?) -> DrainOutcome {
        guard consumerIdle.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
        else { return .empty }
        if let ring, !ring.isQuiescent { waitForCommit(ring) }
        return .more
    }

    /// Most looks `waitForCommit` makes, a `pause` apart, before it gives up the CPU once.
    @usableFromInline static let commitPolls = 64

    /// The consumer owns its turn and a producer has claimed a ring slot without committing
    /// it yet (file comment, "Producers between claim and commit"): looks for the commit up
    /// to `commitPolls` times a `pause` apart; when it still has not landed (the producer
    /// was preempted) and this pool worker has nothing else to run, yields the CPU once so
    /// that the producer can get one. The drain then returns `.more`, and the next turn
    /// takes what committed meanwhile. Consumer only.
    @usableFromInline @inline(never)
    final func waitForCommit(_ ring: RawRing) {
        for _ in 0..<MPSCQueue.commitPolls {
            #if DEBUG
            MPSCQueueTestHook.commitWaitIfArmed(self)
            #endif
            if ring.headIsReadySingleConsumer(slotBytes: slotBytes) { return }
            ckshim_stall()
        }
        if Worker.currentHasNothingElseToRun() { sched_yield() }
    }

    /// Pointer convenience for `drain(max:_:)` (every word must have been a pointer).
    @inlinable
    package final func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> DrainOutcome {
        drain(max: max) { (word: UInt) in body(UnsafeMutableRawPointer(bitPattern: word)!) }
    }

    /// Moves the overflow list into `pending` if the ring is quiescent. Consumer only.
    @usableFromInline @inline(never)
    final func takeOverflowIfQuiescent(_ ring: RawRing) -> Bool {
        guard overflowActive.load(ordering: .acquiring) else { return false }
        return withOverflowLock {
            guard ring.isQuiescent, let list = overflowList(ring), let head = list.head else { return false }
            // The consumer takes a chain only once the previous one is used up (drain hands
            // out `pendingChunk` first), so nothing is pending here.
            assert(list.pendingChunk == nil)
            list.pendingChunk = head
            list.pendingIndex = 0
            list.head = nil
            list.tail = nil
            overflowActive.store(false, ordering: .releasing)
            return true
        }
    }

    // MARK: giving the ring back

    /// Gives the ring back ("Giving the ring back", file comment): when the queue is
    /// reclaimable, has a ring and holds nothing (ring empty and quiescent, no overflow
    /// item), seals the ring so no producer can claim in it, detaches it under the overflow
    /// lock (the taken count carried over in `ringWord`) and hands the block, with its
    /// empty overflow list if it has one, to the ring epoch (freed once no section can
    /// still see them). The next enqueue allocates a fresh ring. True when the ring was
    /// given back; false (nothing changed) otherwise — a producer claimed or overflowed
    /// meanwhile, and its item is delivered as usual. Consumer only, right after a drain
    /// that returned `.empty`. No allocation.
    @discardableResult
    package final func releaseIdleRing() -> Bool {
        var dropped = 0
        return releaseIdleRing(overflowAppends: &dropped)
    }

    /// `releaseIdleRing()`, adding to `dropped` the count of overflow sends the list given
    /// back held (`overflowAppends` starts again from 0): an owner that reports totals
    /// keeps them exact by adding it to its own count of retired overflows.
    package final func releaseIdleRing(overflowAppends dropped: inout Int) -> Bool {
        guard reclaimable, let block = ringBlock else { return false }
        let ring = RawRing(block: block)
        guard !overflowActive.load(ordering: .acquiring), overflowList(ring)?.pendingChunk == nil else { return false }
        #if DEBUG
        if MPSCQueueTestHook.skipSeal.load(ordering: .relaxed) {
            guard ring.isQuiescent else { return false }
        } else {
            guard ring.seal() else { return false }
        }
        #else
        guard ring.seal() else { return false }  // a producer claimed: its item is coming
        #endif
        let detached = withOverflowLock { () -> Bool in
            // A producer that met the sealed ring and overflowed onto it got here first.
            // (overflowActive clear: the list's chain is empty, `head` nil.)
            guard !overflowActive.load(ordering: .relaxed) else { return false }
            ringWord.store(UInt(truncatingIfNeeded: ring.takenCount) << 1 | 1, ordering: .releasing)
            return true
        }
        guard detached else {
            ring.unseal()
            return false
        }
        if let list = overflowList(ring) { dropped += list.appendCount }
        ckshim_ring_retire(ring.ring)  // frees the list too (ckshim.h)
        return true
    }

    /// For the owner's walker (one at a time: FastMailbox's reclaimIdleMailboxes, under its
    /// registry lock): true when the queue has a ring and took no item since the previous
    /// call (the taken count matches the snapshot it keeps in the ring block's header, a
    /// word only the walker touches); records the count either way. Any thread.
    package final func ringIdleSinceLastLook() -> Bool {
        readingRing { ring, _ in
            guard let ring else { return false }
            let seen = UInt64(truncatingIfNeeded: ring.takenCount) &+ 1  // 0: never looked
            let word = ckshim_ring_walker_word(ring.ring)
            let previous = ckshim_load_u64_relaxed(word)
            ckshim_store_u64_relaxed(word, seen)
            return previous == seen
        }
    }

    /// True while the queue holds a ring (a snapshot). Any thread.
    package final var hasRing: Bool { ringBlock != nil }

    /// Closes the queue: later enqueues are refused with `.closed`. Any thread; idempotent.
    /// Returns true for the call that closed it.
    @discardableResult @usableFromInline
    package final func markClosed() -> Bool {
        !closed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Closes the queue and hands back every counted item, in order. Consumer only.
    /// (An enqueue racing with close may still land afterwards; it is counted and will be
    /// reported by the next `becameNonEmpty`, see the file comment.)
    package final func closeAndTakeAll() -> [UInt] {
        markClosed()
        var out: [UInt] = []
        while drain(max: Int.max, { out.append($0) }) == .more {
            ckshim_stall()  // a producer is mid-commit; it finishes in a few instructions
        }
        return out
    }

    /// Pointer form of `closeAndTakeAll()`; the shape MNSerialExecutor uses.
    package final func close() -> [UnsafeMutableRawPointer] {
        closeAndTakeAll().map { UnsafeMutableRawPointer(bitPattern: $0)! }
    }

    /// True once `close()` ran.
    @usableFromInline package final var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Items counted and not yet drained (a snapshot).
    @usableFromInline package final var approximateCount: Int {
        readingRing { ring, _ in
            guard let ring else { return 0 }
            guard let list = overflowList(ring) else { return ring.claimedCount }
            // Handed-out first: both only grow, so the difference never goes below zero.
            let handedOut = list.handedOut
            return ring.claimedCount + Swift.max(list.appendCount - handedOut, 0)
        }
    }

    /// True while a consumer turn is running or due (a producer claimed it since the last
    /// `.empty`; for a queue that signals its unit, the unit is not idle). A consumer that
    /// sees false has nothing to do and must not drain to find out.
    @inlinable package final var hasPendingWork: Bool {
        if signalsUnit { return stateSnapshot != ScheduledUnit.idle }
        return flagSaysPending
    }

    /// `hasPendingWork` of a queue known to keep its idle flag (not `signalsUnit`): the
    /// flag alone, one load (an actor cell's system queue, read before every message).
    @inlinable package final var flagSaysPending: Bool {
        assert(!signalsUnit, "flagSaysPending on a queue that signals its unit")
        return !consumerIdle.load(ordering: .acquiring)
    }

    /// How many enqueues ever took the overflow path (0 means every send stayed lock-free).
    package final var overflowAppends: Int {
        readingRing { ring, _ in ring.flatMap { overflowList($0)?.appendCount } ?? 0 }
    }

    /// Runs `body` holding the overflow spin lock.
    @usableFromInline
    final func withOverflowLock<R>(_ body: () -> R) -> R {
        lockOverflow()
        defer { overflowLock.store(false, ordering: .releasing) }
        return body()
    }

    /// Takes the overflow spin lock (given back by a releasing store of false).
    @inlinable @inline(__always)
    final func lockOverflow() {
        if !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            lockOverflowContended()
        }
    }

    /// Test-and-test-and-set: waits with plain loads (the line stays shared, so the holder
    /// is not robbed of it by failed compare-and-swaps), backing off between looks, and
    /// tries the compare-and-swap only when the lock looks free; after a while (256 looks,
    /// up to 64 pauses each: ~0.5 ms) it yields the CPU to a preempted holder. Yielding
    /// sooner (after 256 pauses in all, ~8 µs) was tried: it helped only while the other CPU
    /// was busy, and with both CPUs free fan-in with 4–64 senders at 2 workers ran 25–33 %
    /// slower (Benchmarks/README.md, "Round `overflow-wait`").
    @usableFromInline @inline(never)
    final func lockOverflowContended() {
        var spins = 0
        var pause = 1
        repeat {
            while overflowLock.load(ordering: .relaxed) {
                for _ in 0..<pause { ckshim_stall() }
                pause = Swift.min(pause * 2, 64)
                spins += 1
                if spins >= 256 { sched_yield(); spins = 0 }
            }
        } while !overflowLock.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    /// Overflow chunks held (taken and not yet used up, or still being appended to): 0 once
    /// a burst has drained. Consumer only (for tests).
    package final var overflowChunksHeld: Int {
        guard let block = ringBlock, let list = overflowList(RawRing(block: block)) else {
            return 0
        }
        return OverflowList.chunks(from: list.pendingChunk) + withOverflowLock { OverflowList.chunks(from: list.head) }
    }

    /// Bytes the ring occupies once allocated (0 before the first enqueue).
    package final var ringBytes: Int {
        ringBlock == nil ? 0 : RawRing.mailboxAllocationSize(capacity: capacity, slotBytes: slotBytes)
    }
}

extension RawRing {
    /// The item type a typed owner recorded when the ring was allocated (ckshim.h, "What
    /// MPSCQueue keeps in its ring block"); nil for an untyped queue. Written once, into the
    /// fresh block before the CAS that publishes it; read by the queue's deinit.
    var itemType: (any MPSCQueueItemType.Type)? {
        get { UnsafeRawPointer(ckshim_ring_item_type_slot(ring)).load(as: (any MPSCQueueItemType.Type)?.self) }
        nonmutating set {
            UnsafeMutableRawPointer(ckshim_ring_item_type_slot(ring)).storeBytes(of: newValue, as: (any MPSCQueueItemType.Type)?.self)
        }
    }
}

#if DEBUG
/// Debug builds only: the points where a test can run an action on one queue exactly
/// once (each a `QueueHookPoint`): an enqueue between its "is it closed?" check and its
/// insert, to replay a send racing a close or a shutdown exactly (the race defect 2 of
/// issue 7 describes); a lingering look ("Lingering" in the file comment); a look of a
/// drain waiting for a producer's commit ("Producers between claim and commit"). One
/// relaxed load per pass when disarmed.
@usableFromInline package enum MPSCQueueTestHook {
    @usableFromInline static let enqueue = QueueHookPoint()
    @usableFromInline static let linger = QueueHookPoint()
    @usableFromInline static let commitWait = QueueHookPoint()
    @usableFromInline static let claim = QueueHookPoint()
    @usableFromInline static let publish = QueueHookPoint()
    /// Makes `releaseIdleRing` skip its seal (checking quiescence instead): only for a
    /// test that shows the seal is needed.
    package static let skipSeal = Atomic<Bool>(false)

    /// The next enqueue on `queue` (from any thread) runs `action` after it loaded the
    /// ring and before it claims a slot; then the hook disarms itself.
    package static func armClaim(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        claim.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func claimIfArmed(_ queue: MPSCQueue) { claim.fireIfArmed(queue) }

    /// The next ring enqueue on `queue` (from any thread) runs `action` after it claimed its
    /// slot and wrote the item, before it publishes the slot (a producer preempted at the
    /// worst moment); then the hook disarms itself. (One made under the overflow lock, when
    /// the ring has room again, holds that lock meanwhile.)
    package static func armPublish(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        publish.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func publishIfArmed(_ queue: MPSCQueue) { publish.fireIfArmed(queue) }

    /// The next enqueue on `queue` (from any thread) runs `action` after its closed check
    /// and before inserting; then the hook disarms itself.
    package static func arm(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        enqueue.arm(queue, action)
    }

    @inlinable @inline(__always)
    package static func pauseIfArmed(_ queue: MPSCQueue) { enqueue.fireIfArmed(queue) }

    /// The next lingering look of a drain of `queue` runs `action` (on the consumer's
    /// thread, before its pause); then the hook disarms itself.
    package static func armLinger(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        linger.arm(queue, action)
    }

    /// Disarms `armLinger` if it has not fired.
    package static func disarmLinger() { linger.disarm() }

    @inlinable @inline(__always)
    package static func lingerIfArmed(_ queue: MPSCQueue) { linger.fireIfArmed(queue) }

    /// The next look of a drain of `queue` waiting for a producer's commit runs `action`
    /// on the consumer's thread before it looks; then the hook disarms itself.
    package static func armCommitWait(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        commitWait.arm(queue, action)
    }

    /// Disarms `armCommitWait` if it has not fired.
    package static func disarmCommitWait() { commitWait.disarm() }

    @inlinable @inline(__always)
    package static func commitWaitIfArmed(_ queue: MPSCQueue) { commitWait.fireIfArmed(queue) }
}

/// Debug builds only: one one-shot test hook point of MPSCQueueTestHook. Armed for one
/// queue with an action; the first pass through the point on that queue disarms it (a
/// CAS, so exactly one thread wins) and runs the action on its own thread.
@usableFromInline package final class QueueHookPoint: Sendable {
    /// The armed queue's identity, 0 when disarmed.
    @usableFromInline let target = Atomic<UInt>(0)
    private let action = Lock<(@Sendable () -> Void)?>(nil)

    init() {}

    func arm(_ queue: MPSCQueue, _ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
        target.store(UInt(bitPattern: ObjectIdentifier(queue).hashValue), ordering: .releasing)
    }

    func disarm() {
        target.store(0, ordering: .releasing)
        action.withLock { $0 = nil }
    }

    @inlinable @inline(__always)
    func fireIfArmed(_ queue: MPSCQueue) {
        let armed = target.load(ordering: .relaxed)
        if armed != 0, armed == UInt(bitPattern: ObjectIdentifier(queue).hashValue) { fire(armed) }
    }

    @usableFromInline func fire(_ armed: UInt) {
        guard target.compareExchange(expected: armed, desired: 0, ordering: .acquiringAndReleasing).exchanged,
              let action = action.withLock({ body -> (@Sendable () -> Void)? in defer { body = nil }; return body })
        else { return }
        action()
    }
}
#endif
