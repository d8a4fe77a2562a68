// RingEpoch — the grace period for ring blocks an MPSCQueue gave back (MPSCQueue.swift,
// "Giving the ring back"): one process-wide ck_epoch domain (Concurrency Kit's epoch-based
// reclamation), with its C parts in ckshim.h ("ring epoch").
//
// ## Who is a reader, and when
// A reader is any thread that may dereference a ring block it loaded from a *reclaimable*
// queue's `ringWord` (a producer: its claim, a failed claim's c_head load, the overflow
// path's list load; a statistics reader: approximateCount, dequeuedCount, overflowAppends;
// the walker's look at the taken count). The queue's consumer is not: only it gives the
// ring back, in its own turn (a sequential actor's consumer: its body's task). Every reader holds a *section* while it holds the address:
//  - a pool worker holds one for as long as it runs units: entered when its loop starts,
//    ended and re-entered at each injection poll (Worker step 1: every 2 to 61 ticks, so
//    the epoch can advance past it; nothing per turn), ended before it parks (and entered
//    again when it wakes) and when its loop ends. A spare thread holds one around each
//    unit it runs. So a send from a turn costs nothing here but the producer's test below;
//  - any other thread (the main thread, timers, a deterministic scheduler's test thread,
//    a user thread, a sequential actor's thread) enters a section around each access, and
//    only for a reclaimable queue: the producer's test is `ckshim_epoch_depth() == 0`, one
//    thread-pointer-relative load and a branch, then the queue's `reclaimable` byte. A
//    queue that is never given back (a standalone Mailbox, MNSerialExecutor's) never pays
//    for a section. A thread's first section registers its record (ck_epoch_recycle, or a
//    new cache-aligned record); a pthread key's destructor unregisters it at thread exit,
//    so the next thread recycles it.
// Sections nest (a depth per thread; ck's begin and end run at the outermost level only).
//
// ## Retire and collect
// The consumer that detached a ring (under the overflow lock, a release store of the
// ring-less word) retires the block: ck_epoch_call on the *reclaimer*, one record that
// never enters a section, with the ck_epoch_entry_t placed in the block's header padding
// (no allocation; ckshim.h) — at once after a full fence (fenced mode), or by the next
// collection after its membarrier (asymmetric mode: the block waits on a pending list
// linked through that entry). Every use of the reclaimer and the list is under one mutex,
// so any thread retires and any thread collects: a block retired by a worker that then
// parks is still freed by the next collector. A collection (`ck_epoch_poll` on the
// reclaimer, `collect`) frees the blocks whose grace period is over and tries to advance
// the epoch. Collectors: each worker at its section refresh and before it parks (a
// try-lock, and only when something is waiting: one relaxed load otherwise), FastMailbox's
// walker after each walk, and `collect(wait: true)` for tests and benchmarks. A collector
// is outside any section of its own (its own old epoch would hold the epoch back).
//
// ## Why a block is never freed under a reader (x86-64 and AArch64)
// ck_epoch's guarantee: an entry deferred while the global epoch reads e is dispatched only
// once the poller has seen the global epoch reach e + 2 or every record inactive, and the
// epoch advances from g only when every active record has observed g. It rests on two
// store→load pairs: a reader's `active = 1` before its loads (of the global epoch, of
// `ringWord`, of the block), and a retirer's detach before its load of the epoch it
// records, with the poller's scan of the records after its own epoch load. The process
// runs in one of two modes, decided once (`isAsymmetric`, ckshim.h) before any section
// begins, any block is retired or any collection runs, and never changed ("Choosing the
// mode" below).
//
// Fenced mode (where the kernel refuses membarrier): ck's own protocol, plus a fence.
//  - begin (outermost): store active = 1, store→load barrier, load the global epoch, store
//    it in the record. x86-64: `xchg` (CK_MD_TSO: ck_pr_fas) — a full barrier; AArch64:
//    `str`, `dmb ish` (ck_pr_fence_memory). The reader's loads of `ringWord` and of the
//    block come after it in program order, so after the barrier.
//  - retire: the detach (release store of the ring-less word, under the overflow lock),
//    then a full fence (ckshim_ring_retire: `mfence` or a locked op on x86-64, `dmb ish` on
//    AArch64), then ck_epoch_call's load of the global epoch e. ck's own call has no fence
//    (it assumes the unlink was a read-modify-write, a full barrier on x86); our detach is
//    a plain store, which x86 may hold in its store buffer past that load: the epoch read
//    could then be older than a section that began after it yet still loads the old
//    address, and the block would be freed one epoch too early. With the fence, a section
//    that can load the old address began (its barrier) before the detach is visible, so it
//    observed an epoch ≤ e and blocks the advance past e + 1 until it ends.
//
// ## Asymmetric fences (Linux membarrier, the default where the kernel offers it)
// The reader's barrier is the hot one (every send from outside the pool pays it: `xchg`
// was ~30 % of such a send's samples), the retirer's and poller's are rare; so the reader's
// becomes a compiler barrier and the other side pays `membarrier(PRIVATE_EXPEDITED)`,
// which runs a full barrier on every CPU running a thread of this process (a thread not
// running passes one at its context switch) — the scheme of userspace RCU's membarrier
// flavour and of folly's asymmetric fences.
//  - begin: store active = 1, load the global epoch, store it in the record, in program
//    order with compiler barriers only (no `xchg`, no `dmb`).
//  - retire: the detach, then the block goes on a pending list under the reclaimer's lock;
//    no fence, no epoch load.
//  - collect: under the lock, if blocks are pending: one membarrier, then ck_epoch_call for
//    each (its epoch load), then ck_epoch_poll as before. No pending block: no membarrier.
// Why it holds. The membarrier is a point X in each reader R's program order with a full
// barrier there. Take a pending block B (detached before the collector took the lock, so
// before X everywhere: the lock orders the detach before the collector's membarrier, and
// a store one other CPU has seen is seen by all: x86-TSO and ARMv8 are multi-copy atomic).
// If R's load of `ringWord` comes after X, it sees the detach and never learns B's
// address. If it comes before X, so do R's `active = 1` and its epoch store (earlier in
// program order), which X makes visible to every scan after it: R is seen active with an
// epoch ≤ the e recorded for B (recorded after X), so the epoch cannot reach e + 2, nor can
// a scan find every record inactive, until R's section ends. A later poll without a
// membarrier reads R's `active` by coherence: still 1, or the 0 of its end. Blocks retired
// later are covered by the membarrier of the collection that calls them.
//  - end, in both modes: release fence, store active − 1. x86-64: a plain store (TSO keeps
//    the earlier loads before it); AArch64: `dmb ish`, `str`. Every access to the block
//    made in the section is ordered before the store that says "inactive". (Not relaxed in
//    asymmetric mode: a poll may run without a membarrier.)
//  - poll, in both modes: load the global epoch, full fence, then each record's `active`
//    and `epoch` (x86-64: `mfence`; AArch64: `dmb ish`); a free is control-dependent on
//    those loads and on the release-ordered end of each section it waited for.
// So a reader that loaded a block's address frees the way only when its section ends,
// and everything it read of the block was read before that (end's release). Under
// ThreadSanitizer (CKSHIM_TSAN), which cannot see ck's assembly, a section's end releases
// on the domain and a collection acquires on it, the same edge.
//
// ## Choosing the mode (MN_RING_EPOCH)
// The mode is the process's, not a scheduler's: decided at its first use (a thread's first
// section, the first retire or collection, or `isAsymmetric`, whichever comes first:
// pthread_once in ckshim.h) and never changed after; a process cannot switch, and setting
// the variable after that first use changes nothing. The decision reads MN_RING_EPOCH:
//  - unset or `auto`: asymmetric where registering for membarrier(PRIVATE_EXPEDITED)
//    succeeds, fenced where the kernel refuses it (kernels before Linux 4.14, sandboxes
//    whose seccomp filter blocks the call);
//  - `fenced`: fenced whatever the kernel offers. So tests and CI run the fenced mode on a
//    machine that would choose asymmetric (.ci/run runs this file's tests and the
//    reclaim suites again with it).
// Case is ignored. Any other value counts as `auto` for the decision, and every
// Scheduler's start refuses it with a SchedulerConfigurationError naming the variable and
// the accepted values (`checkEnvironment`, called by SchedulerConfiguration.resolved even
// with readsEnvironment false: the variable is the process's).
//
// ## Cost and limits
// A producer on a pool worker: the depth test (≈2–3 instructions per send). A worker:
// a section refresh per injection poll (a few stores; fenced mode: and an `xchg`), nothing
// per turn. A thread outside a section, per send to a reclaimable queue: begin and end,
// about 30 instructions in all with deliverInSection's call (callgrind fan-in from the main
// thread, when the asymmetric mode came in: 171 per message, 176 fenced, 140 with the
// section held open for the whole run; 2026-11-27: 163, and 169 with MN_RING_EPOCH=fenced).
// In fenced mode begin's `xchg` took ~30 % of deliverInSection's samples in `parallel` at
// 2 workers (~9 ns a send). A collection with blocks pending
// costs one membarrier (~0.2 µs on a lone thread here; an interrupt for each CPU running
// one of this process's threads), shared by every block retired since the last one.
// Why an outside thread's section is not kept open across its sends: ck cannot end a
// section for another thread, so a thread that sends once and then blocks (a main thread
// waiting on a semaphore) would hold the epoch back with no bound: every ring given back
// after that would wait for its next send or its exit.
// A worker inside one very long turn (or `blocking {}`) holds the epoch back: retired
// blocks then wait (memory, never safety) until its turn ends.

import CConcurrencyKit

/// The ring epoch domain's Swift face (the protocol is in this file's comment).
@usableFromInline package enum RingEpoch {
    /// Enters a (nested) section on the calling thread.
    @inlinable package static func enter() { ckshim_epoch_enter() }

    /// Leaves the section `enter()` entered.
    @inlinable package static func exit() { ckshim_epoch_exit() }

    /// True while the calling thread is inside a section.
    @inlinable package static var isInSection: Bool { ckshim_epoch_depth() != 0 }

    /// A worker's periodic refresh: ends its section, collects, enters again (depth 1); at
    /// depth 0 it only collects.
    @inlinable package static func refresh() { ckshim_epoch_refresh() }

    /// Frees the retired ring blocks whose grace period is over and returns how many still
    /// wait. Call outside a section. `wait`: block on the reclaimer's lock rather than
    /// give up when another thread is collecting.
    @discardableResult
    package static func collect(wait: Bool = false) -> Int {
        precondition(ckshim_epoch_depth() == 0, "RingEpoch.collect inside a section would hold the epoch back")
        return Int(ckshim_epoch_collect(wait))
    }

    /// True when sections begin without a store→load fence and each collection that hands
    /// retired blocks over pays one membarrier instead (file comment, "Asymmetric fences");
    /// false in the fenced mode: where the kernel refuses membarrier, or MN_RING_EPOCH is
    /// `fenced`. The mode in use, decided once per process (deciding it if nobody has).
    package static var isAsymmetric: Bool { ckshim_epoch_is_asymmetric() }

    /// The environment variable that chooses the mode (file comment, "Choosing the mode").
    package static let environmentVariable = "MN_RING_EPOCH"

    /// MN_RING_EPOCH's accepted values, in words (used in error messages).
    package static let allowedValues = "one of auto, fenced (case ignored; process-wide, read once at first use)"

    /// Checks MN_RING_EPOCH in `environment` as ckshim.h's decision reads it: unset, `auto`
    /// or `fenced`, case ignored. Returns whether it asks for the fenced mode; throws for any
    /// other value, naming the variable, the value and the accepted values.
    package static func checkEnvironment(_ environment: [String: String]) throws(SchedulerConfigurationError) -> Bool {
        guard let text = environment[environmentVariable] else { return false }
        switch text.lowercased() {
        case "auto": return false
        case "fenced": return true
        default: throw SchedulerConfigurationError(variable: environmentVariable, value: text, allowed: allowedValues)
        }
    }

    /// Ring blocks retired and not yet freed (a snapshot).
    package static var pendingBlocks: Int { Int(ckshim_epoch_limbo_count()) }
}
