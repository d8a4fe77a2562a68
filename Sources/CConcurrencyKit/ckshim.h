/*
 * ckshim.h — Concurrency Kit for Swift, plus the thin shims Swift cannot write itself.
 * Everything here is `static inline` (Swift imports it and clang inlines it into the Swift
 * caller at -O, so a send calls no ckshim or ck symbol) and neither allocates nor locks,
 * except the ring epoch's cold paths (a thread's first section allocates its record;
 * retiring and collecting rings take a mutex and may make one membarrier call).
 *
 * What is here, each with its invariants and orderings in its own section below:
 *  - "Ready marks": the mailbox ring. ck_ring's claim with a ready mark per entry instead
 *    of ck's in-order commit, so no producer waits for another; messages travel in place.
 *  - "ck_ring": ck's pointer operations (spsc, spmc, mpsc, mpmc) as wrappers, with our own
 *    consumers, which order the slot's read before the c_head publish (ck's do not on
 *    AArch64: "Consumer ordering").
 *  - "TSan": happens-before annotations for ThreadSanitizer, which cannot see ck's inline
 *    assembly (built in with -DCKSHIM_TSAN=1 beside --sanitize=thread).
 *  - "current worker": the worker's thread-local pointer, read with one load.
 *  - "ring epoch": the ck_epoch domain that lets an idle mailbox give its ring back (the
 *    protocol is argued in MNScheduler.docc/RingEpochProtocol.md).
 *  - The platform layer (ckplatform.h: waiting, membarrier, threads, CPUs), included here
 *    so one module carries it; this file includes no operating-system header itself.
 * The idle-flag Dekker pair built on top of the ring is argued in
 * MNScheduler.docc/MailboxQueue.md.
 */
#ifndef CKSHIM_H
#define CKSHIM_H

/* Without Concurrency Kit's headers, say what to install instead of "file not found". */
#if defined(__has_include) && !__has_include(<ck_ring.h>)
#error "FastMailbox needs Concurrency Kit: `sudo apt-get install libck-dev` (Debian/Ubuntu), `sudo dnf install ck-devel` (Fedora), `brew install concurrencykit` (macOS), or scripts/bootstrap.sh; elsewhere see the README, Platforms"
#endif
#include <ck_ring.h>
#include <ck_pr.h>
#include <ck_md.h>
#include <ck_spinlock.h>
#include <ck_backoff.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <time.h>
#include <sched.h>
#include "ckplatform.h"

/* ---------------------------------------------------------------- TSan */

#if defined(CKSHIM_TSAN) && CKSHIM_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define CKSHIM_TSAN_ACQUIRE(a) __tsan_acquire((void *)(a))
#define CKSHIM_TSAN_RELEASE(a) __tsan_release((void *)(a))
#define CKSHIM_TSAN_ENABLED 1
#else
#define CKSHIM_TSAN_ACQUIRE(a) ((void)0)
#define CKSHIM_TSAN_RELEASE(a) ((void)0)
#define CKSHIM_TSAN_ENABLED 0
#endif

/** 1 when this build carries the ThreadSanitizer annotations. */
static inline int ckshim_tsan_enabled(void) { return CKSHIM_TSAN_ENABLED; }

/** Explicit happens-before edges for Swift code that synchronises through ck memory. */
static inline void ckshim_tsan_acquire(const void *addr) { CKSHIM_TSAN_ACQUIRE(addr); (void)addr; }
static inline void ckshim_tsan_release(const void *addr) { CKSHIM_TSAN_RELEASE(addr); (void)addr; }

/* ---------------------------------------------------------------- ck_ring */

/** The cache line size ck was built for. */
static inline size_t ckshim_cacheline(void) { return CK_MD_CACHELINE; }

/*
 * The producers' cached copy of c_head ("Cached c_head" in the ck_ring section below)
 * lives in the padding after p_head, the producers' own cache line. ck never reads or
 * writes its padding; ckshim_ring_init zeroes the copy with the heads.
 */
_Static_assert(CK_MD_CACHELINE >= 3 * sizeof(unsigned int), "ck_ring's padding holds the cached c_head");
static inline unsigned int *ckshim__cached_c_head(ck_ring_t *r) { return (unsigned int *)(void *)r->_pad; }

/*
 * What MPSCQueue keeps in its ring block (MailboxQueue.md, "Where the fields live"), all
 * outside ck's fields:
 *  - in c_head's padding, on the line only the consumer writes (the 16-byte granule that
 *    holds c_head, and the rest of the 64 bytes from the block's start):
 *    - the consumer's count of items taken, beside c_head (offset 8);
 *    - the items' type, two words (a Swift existential metatype, or zero: untyped) at
 *      offset 16: written once, by the thread that allocates the ring, before the
 *      compare-and-swap that publishes the block (release); read only by the queue's
 *      deinit. Never on a hot path;
 *    - the ring epoch's deferral entry (offset 32, written when a given-back ring is
 *      retired) and the walker's snapshot of the taken count (offset 48; "ring epoch"
 *      below). No producer reads or writes them;
 *  - the overflow list's address, just past struct ck_ring (offset sizeof(struct ck_ring),
 *    on size/mask's read-mostly line): written once, by the first overflow append
 *    (release), read by the consumer (acquire) and by producers under the overflow lock.
 * RawRing's header is sizeof(struct ck_ring) plus that word, rounded up to 16
 * (ckshim_ring_block_header_size).
 */
#define CKSHIM__RING_TAKEN_OFFSET 8
#define CKSHIM__RING_ITEM_TYPE_OFFSET 16
#define CKSHIM__RING_EPOCH_ENTRY_OFFSET 32
#define CKSHIM__RING_WALKER_OFFSET 48
_Static_assert(sizeof(((struct ck_ring *)0)->pad) + sizeof(unsigned int) >= CKSHIM__RING_WALKER_OFFSET + sizeof(uint64_t),
               "c_head's padding holds the taken count, the item type, the deferral entry and the walker's word");
_Static_assert(sizeof(struct ck_ring) % 8 == 0, "the overflow list's address is 8-byte aligned");
static inline uint64_t *ckshim__ring_taken_word(ck_ring_t *r) { return (uint64_t *)(void *)((char *)r + CKSHIM__RING_TAKEN_OFFSET); }
static inline void **ckshim__ring_overflow_word(ck_ring_t *r) { return (void **)(void *)((char *)r + sizeof(struct ck_ring)); }
/* The items' type (see above): two words, 8-byte aligned. */
static inline void *ckshim_ring_item_type_slot(ck_ring_t *r) { return (void *)((char *)r + CKSHIM__RING_ITEM_TYPE_OFFSET); }
/** Bytes of a ring block before its slots: struct ck_ring and the overflow word, rounded up
 *  to 16 so that the slots stay 16-byte aligned. */
static inline size_t ckshim_ring_block_header_size(void) { return (sizeof(struct ck_ring) + sizeof(void *) + 15) & ~(size_t)15; }

static inline void ckshim_ring_init(ck_ring_t *ring, unsigned int size) {
    ck_ring_init(ring, size);
    *ckshim__cached_c_head(ring) = 0;
    *ckshim__ring_taken_word(ring) = 0;
    *ckshim__ring_overflow_word(ring) = NULL;
    ((void **)ckshim_ring_item_type_slot(ring))[0] = NULL;
    ((void **)ckshim_ring_item_type_slot(ring))[1] = NULL;
    *(uint64_t *)(void *)((char *)ring + CKSHIM__RING_WALKER_OFFSET) = 0; /* ckshim_ring_walker_word */
}

/* Relaxed 64-bit loads and stores of a word that one thread writes and others read for
 * statistics (C11 atomics: plain moves on x86-64 and AArch64, and visible to
 * ThreadSanitizer). */
static inline uint64_t ckshim_load_u64_relaxed(const void *p) {
    return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
}
static inline void ckshim_store_u64_relaxed(void *p, uint64_t value) {
    __atomic_store_n((uint64_t *)p, value, __ATOMIC_RELAXED);
}

/* The consumer's count of items taken (see above). */
static inline uint64_t ckshim_ring_taken_load(ck_ring_t *r) { return ckshim_load_u64_relaxed(ckshim__ring_taken_word(r)); }
static inline void ckshim_ring_taken_store(ck_ring_t *r, uint64_t value) { ckshim_store_u64_relaxed(ckshim__ring_taken_word(r), value); }

/* The overflow list's address (see above). */
static inline void *ckshim_ring_overflow_load(ck_ring_t *r) {
    return __atomic_load_n(ckshim__ring_overflow_word(r), __ATOMIC_ACQUIRE);
}
static inline void ckshim_ring_overflow_store(ck_ring_t *r, void *list) {
    __atomic_store_n(ckshim__ring_overflow_word(r), list, __ATOMIC_RELEASE);
}
static inline unsigned int ckshim_ring_size(const ck_ring_t *ring) { return ck_ring_size(ring); }
/* ck_ring_size(ring) == 0 (the same two loads, without the subtraction and the mask): a
 * snapshot, as the size is (p_tail - c_head never exceeds the mask, so the masked
 * difference is 0 exactly when the two are equal). */
static inline bool ckshim_ring_is_empty(const ck_ring_t *ring) {
    return ck_pr_load_uint(&ring->c_head) == ck_pr_load_uint(&ring->p_tail);
}
static inline unsigned int ckshim_ring_capacity(const ck_ring_t *ring) { return ck_ring_capacity(ring); }

/*
 * Consumer ordering (why the consumers are re-implemented here). A consumer reads the slot
 * at c_head, then publishes c_head + 1, which tells producers the slot may be overwritten:
 * the slot's load must come before the c_head store. Concurrency Kit 0.7.1 puts only a
 * store fence there, which on AArch64 (`dmb ishst`) lets the load be satisfied after the
 * publish: a producer could overwrite the slot first, losing one message and duplicating
 * another. Our dequeues are ck's with a release fence there instead (CKSHIM_FENCE_RELEASE),
 * which orders every earlier load and store before the publish.
 *  - x86-64 (TSO): loads are never reordered with later stores; the fence is a compiler
 *    barrier, and the code is ck's.
 *  - AArch64: `dmb ish` before the c_head store (or the CAS).
 * The producer's slot write is control-dependent on its c_head read (the full check, then
 * the ticket CAS), and neither x86-64 nor ARMv8 makes a store visible before the branch it
 * depends on resolves, so the producer needs no fence. The fence is chosen by the
 * compiler's target; ck's own fences come from ck_md.h, which must match the target
 * (Debian's x86-64 libck-dev says CK_MD_TSO; an AArch64 build needs CK_MD_RMO). To check
 * the generated fences: compile a caller of these shims with
 * `clang --target=aarch64-linux-gnu -O2 -S -DCK_MD_RMO` and read the barriers around the
 * slot load and the c_head store.
 */

/*
 * Orders every earlier load and store before the next store: the slot load before the
 * c_head publish ("Consumer ordering"). A compiler barrier on x86-64, `dmb ish` on
 * AArch64.
 */
#define CKSHIM_FENCE_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * The single-consumer dequeue: ck's _ck_ring_dequeue_sc with a release fence, instead of
 * ck's store fence, between the slot load and the c_head publish.
 */
static inline bool ckshim__dequeue_sc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    const unsigned int mask = r->mask;
    const unsigned int consumer = r->c_head; /* only this consumer writes it */
    const unsigned int producer = ck_pr_load_uint(&r->p_tail);
    if (CK_CC_UNLIKELY(consumer == producer)) return false;
    ck_pr_fence_load(); /* the slot is read after the p_tail that published it */
    void *value = b[consumer & mask].value;
    CKSHIM_FENCE_RELEASE(); /* the slot load before the publish that frees the slot */
    ck_pr_store_uint(&r->c_head, consumer + 1);
    memcpy(out, &value, sizeof value);
    return true;
}

/*
 * The multi-consumer dequeue: ck's _ck_ring_dequeue_mc with a release fence, instead of
 * ck's store-atomic fence, between the slot load and the c_head CAS.
 */
static inline bool ckshim__dequeue_mc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    const unsigned int mask = r->mask;
    unsigned int consumer = ck_pr_load_uint(&r->c_head);
    void *value;
    do {
        ck_pr_fence_load(); /* p_tail relative to our c_head snapshot */
        const unsigned int producer = ck_pr_load_uint(&r->p_tail);
        if (CK_CC_UNLIKELY(consumer == producer)) return false;
        ck_pr_fence_load();
        value = ck_pr_load_ptr(&b[consumer & mask].value);
        CKSHIM_FENCE_RELEASE(); /* the slot load before the CAS that frees the slot */
    } while (!ck_pr_cas_uint_value(&r->c_head, consumer, consumer + 1, &consumer));
    memcpy(out, &value, sizeof value);
    return true;
}

/* One attempt of ckshim__dequeue_mc (ck's _ck_ring_trydequeue_mc, same fence change). */
static inline bool ckshim__trydequeue_mc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    const unsigned int mask = r->mask;
    const unsigned int consumer = ck_pr_load_uint(&r->c_head);
    ck_pr_fence_load();
    const unsigned int producer = ck_pr_load_uint(&r->p_tail);
    if (CK_CC_UNLIKELY(consumer == producer)) return false;
    ck_pr_fence_load();
    void *value = ck_pr_load_ptr(&b[consumer & mask].value);
    CKSHIM_FENCE_RELEASE();
    if (!ck_pr_cas_uint(&r->c_head, consumer, consumer + 1)) return false;
    memcpy(out, &value, sizeof value);
    return true;
}

/* Single producer, single consumer. */
static inline bool ckshim_ring_enqueue_spsc(ck_ring_t *r, ck_ring_buffer_t *b, const void *e) {
    CKSHIM_TSAN_RELEASE(r);
    return ck_ring_enqueue_spsc(r, b, e);
}
static inline bool ckshim_ring_dequeue_spsc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__dequeue_sc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}

/* Multi producer, single consumer. */
static inline bool ckshim_ring_enqueue_mpsc(ck_ring_t *r, ck_ring_buffer_t *b, const void *e) {
    CKSHIM_TSAN_RELEASE(r);
    return ck_ring_enqueue_mpsc(r, b, e);
}
static inline bool ckshim_ring_dequeue_mpsc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__dequeue_sc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}

/*
 * Multi-producer enqueue of a pointer that yields while it waits for its turn to commit:
 * ck's _ck_ring_enqueue_mp (claim a ticket with a CAS on p_head, write the slot, wait
 * until p_tail equals the ticket, store fence, publish p_tail = ticket + 1) with a wait
 * that calls sched_yield() after 256 pauses instead of spinning forever. Only ring-bench's
 * raw-ring rows use it, as the floor of ck's own in-order commit; mailboxes publish with
 * ready marks instead ("Ready marks" below) and never wait for another producer.
 */
static __attribute__((noinline)) void ckshim_ring_commit_wait(ck_ring_t *r, unsigned int ticket) {
    unsigned int spins = 0;
    while (ck_pr_load_uint(&r->p_tail) != ticket) {
        if (++spins < 256) {
            ck_pr_stall();
        } else {
            spins = 0;
            sched_yield();
        }
    }
}

/*
 * Ready marks: the multi-producer, single-consumer protocol of mailbox rings.
 * (Models/mailbox.pml, unit_mailbox.pml and ring_reclaim.pml check it with spin.)
 *
 * A mailbox ring holds entries of `stride` bytes: an 8-byte ready mark (a 32-bit word and
 * 4 bytes of padding), then a slot of `stride` − 8 bytes (a multiple of 8, at most 64), so
 * a message is written into its slot in place and moved out of it by the consumer: no
 * box, no allocation. The entries are zeroed when the ring is made (RawRing.swift,
 * "Layout"); mark and slot share a cache line whenever the entry fits in one. ck's p_tail is not used: a producer publishes its own slot, so
 * no producer ever waits for another.
 *   producer: claim ticket t (CAS on p_head; refused when p_head − c_head ≥ mask, i.e.
 *             full) → write the slot of entry t & mask → release store of its mark, t + 1;
 *   consumer: at c, acquire load of entry c & mask's mark; equal to c + 1 → read (move
 *             out of) its slot → release fence → store c_head = c + 1.
 * Invariants:
 *  1. Slot i is written only by the producer holding a ticket t with t & mask == i, and
 *     that ticket was claimed only after c_head passed t − capacity: the slot's previous
 *     entry (ticket t − capacity) was read and released first.
 *  2. Entry i's mark is t + 1 for the last ticket t published there, or 0 before the
 *     first. The consumer at c looks for c + 1. The entry's last publish is either ticket
 *     c (ready) or ticket c − capacity (mark c + 1 − capacity): a stale mark never
 *     matches, nor does the initial 0 (c + 1 = 0 needs c = 2^32 − 1, an entry already
 *     published at ticket mask). Counters are 32 bits, like ck's, and wrap (capacity
 *     divides 2^32, so entry indices survive the wrap); nothing sleeps through 2^32
 *     enqueues between its read and its use of them.
 *  3. Only the consumer waits, and only for the one slot at c_head: a producer that claimed
 *     c and has not published yet (it may be preempted). Its entry is certain to come
 *     (p_head > c_head), so the consumer keeps its turn for it (MailboxQueue.md,
 *     "Producers between claim and publish") and everyone else goes on: later producers
 *     publish their own slots, fill the ring, and then take the ordered overflow.
 *  4. Quiescence (nothing claimed and not consumed) is p_head == c_head, as in ck.
 * Orderings (the same on x86-64 and AArch64):
 *  - Slot write before the consumer's read: the producer's release store of the mark
 *    orders its slot write before it; the consumer's acquire load that reads that mark
 *    orders its slot read after it. (x86-64: plain moves; AArch64: `stlr` / `ldar`.)
 *  - Slot read before a producer's reuse: consumer: read slot → release fence → store
 *    c_head; producer: load c_head (directly or through the cached copy below) → compare →
 *    ticket CAS → (control dependency) write the slot. Neither x86-64 nor ARMv8 makes a
 *    store visible before the branch it depends on resolves, and both keep loads before
 *    later dependent stores ("Consumer ordering").
 *  - The Dekker pair with the idle flag uses the ticket CAS on p_head, not the mark
 *    (MailboxQueue.md, "Who runs the consumer"): a consumer that sees p_head moved keeps
 *    its turn and waits for the mark (invariant 3).
 * Under CKSHIM_TSAN the producer acquires on the ring after its claim (the consumer's reads
 * of the slot's previous entry happen before this write) and releases before its publish;
 * the consumer acquires after a ready peek and releases before freeing the slot.
 *
 * Cached c_head (the reserve below; rigtorp's and Vyukov's queues do the same).
 * ck's reserve reads c_head on every enqueue, but the consumer writes c_head on every
 * dequeue: with the consumer on one core and a producer on another, every message then
 * pulls the consumer's line over to the producer and back. So the producers keep a copy of
 * c_head in their own line (ckshim__cached_c_head, beside p_head, which they write anyway)
 * and read the real c_head only when the copy says "full".
 *  - Any producer that read c_head stores what it read into the copy; all read it. c_head
 *    only grows, so any value read of it, however stale, is ≤ the real c_head:
 *    `producer − copy < mask` implies `producer − c_head < mask`. A stale copy can only
 *    make the ring look fuller (then the real c_head is read and the copy refreshed),
 *    never let a producer claim a slot the consumer has not freed. A producer that stores
 *    an older value over a newer one costs one more refresh.
 *  - Slot reuse stays ordered after the consumer's read of the slot's previous entry:
 *    consumer: read slot → release fence → store c_head; the refreshing producer: load
 *    c_head → (data dependency) store the copy; the claiming producer: load the copy →
 *    compare and ticket CAS → (control dependency) write the slot. ARMv8 is
 *    other-multi-copy-atomic and orders a store after the loads it depends on by data or
 *    control, so the chain orders the write after the read, as a direct c_head read does.
 * Only this reserve reads the copy; every other operation reads the real c_head.
 *
 * The reserve claims a ticket and returns b + size × (ticket & mask): ck's slot for a
 * pointer ring; for a mailbox ring, called with b + CKSHIM_RING_MARK_BYTES and the entry
 * stride, the claimed entry's slot, its mark CKSHIM_RING_MARK_BYTES before it.
 */
static inline void *ckshim_ring_reserve_mp_sized(ck_ring_t *r, void *b, unsigned int size,
                                                 unsigned int *ticket) {
    const unsigned int mask = r->mask;
    unsigned int *cached = ckshim__cached_c_head(r);
    unsigned int producer = ck_pr_load_uint(&r->p_head);
    unsigned int consumer = ck_pr_load_uint(cached);
    for (;;) {
        if (CK_CC_LIKELY((producer - consumer) < mask)) {
            /* On failure the CAS reloads producer; the cached consumer still bounds it. */
            if (ck_pr_cas_uint_value(&r->p_head, producer, producer + 1, &producer)) break;
            continue;
        }
        /* Full by the cached c_head: look at the real one (ck's reserve, from here on). */
        ck_pr_fence_load();
        const unsigned int fresh = ck_pr_load_uint(&r->c_head);
        if (fresh != consumer) {
            consumer = fresh;
            ck_pr_store_uint(cached, fresh);
            continue;
        }
        ck_pr_fence_load();
        const unsigned int again = ck_pr_load_uint(&r->p_head);
        if (again == producer) return NULL; /* really full (or sealed) */
        producer = again;
    }
    *ticket = producer;
    CKSHIM_TSAN_ACQUIRE(r);
    return (char *)b + size * (producer & mask);
}

/* ck's in-order pointer enqueue with the yielding wait (see ckshim_ring_commit_wait):
 * ring-bench's raw-ring floor. False when full. */
static inline bool ckshim_ring_enqueue_mp_yielding(ck_ring_t *r, ck_ring_buffer_t *b, const void *e) {
    unsigned int ticket;
    void **slot = (void **)ckshim_ring_reserve_mp_sized(r, b, sizeof(void *), &ticket);
    if (slot == NULL) return false;
    *slot = (void *)e;
    CKSHIM_TSAN_RELEASE(r);
    if (CK_CC_UNLIKELY(ck_pr_load_uint(&r->p_tail) != ticket)) ckshim_ring_commit_wait(r, ticket);
    ck_pr_fence_store();
    ck_pr_store_uint(&r->p_tail, ticket + 1);
    return true;
}

/* Bytes of a mailbox entry's ready mark, before its slot. */
#define CKSHIM_RING_MARK_BYTES 8

/* Publishes the slot claimed with `ticket`: one release store of its entry's mark, just
 * before it; no wait. */
static inline __attribute__((always_inline)) void ckshim_ring_publish_mp(ck_ring_t *r, void *slot, unsigned int ticket) {
    CKSHIM_TSAN_RELEASE(r);
    (void)r;
    __atomic_store_n((unsigned int *)(void *)((char *)slot - CKSHIM_RING_MARK_BYTES), ticket + 1, __ATOMIC_RELEASE);
}

/* c_head, for the single consumer's loop (only it writes c_head, so it keeps the value in a
 * register across a drain: ckshim_ring_peek_sc_at/_next, ckshim_ring_release_sc_to). */
static inline unsigned int ckshim_ring_head_sc(const ck_ring_t *r) { return r->c_head; }

/* The slot of the entry of ticket `consumer` (the current c_head) when it is published,
 * else NULL (empty, or claimed and not yet published); the caller moves the item out, then
 * calls ckshim_ring_release_sc_to(r, consumer + 1). A drain's first look: its turn was
 * scheduled for an item, so the entry's mark is read at once. */
static inline void *ckshim_ring_peek_sc_at(ck_ring_t *r, void *b, unsigned int stride, unsigned int consumer) {
    char *entry = (char *)b + (size_t)stride * (consumer & r->mask);
    if (CK_CC_UNLIKELY(__atomic_load_n((unsigned int *)(void *)entry, __ATOMIC_ACQUIRE) != consumer + 1)) return NULL;
    CKSHIM_TSAN_ACQUIRE(r);
    return entry + CKSHIM_RING_MARK_BYTES;
}

/* ckshim_ring_peek_sc_at for a drain's later looks, one of which finds the ring empty:
 * nothing claimed (p_head == c_head) answers first, from the producers' line, without the
 * entry's address and without touching the entry a producer writes next. */
static inline void *ckshim_ring_peek_sc_next(ck_ring_t *r, void *b, unsigned int stride, unsigned int consumer) {
    if (CK_CC_UNLIKELY(ck_pr_load_uint(&r->p_head) == consumer)) return NULL; /* nothing claimed */
    return ckshim_ring_peek_sc_at(r, b, stride, consumer);
}

/* Whether the entry at c_head is published, from any thread (c_head read atomically): a
 * hint, true also for an entry a consumer is taking meanwhile. */
static inline bool ckshim_ring_head_ready_any(ck_ring_t *r, void *b, unsigned int stride) {
    return ckshim_ring_peek_sc_at(r, b, stride, ck_pr_load_uint(&r->c_head)) != NULL;
}

/* Frees the slot a peek returned: c_head = `next` (its ticket + 1). */
static inline void ckshim_ring_release_sc_to(ck_ring_t *r, unsigned int next) {
    CKSHIM_FENCE_RELEASE(); /* the slot's reads before the publish that frees it */
    CKSHIM_TSAN_RELEASE(r);
    ck_pr_store_uint(&r->c_head, next);
}

/* Entries claimed and not yet consumed, published or not (a snapshot): p_head − c_head,
 * or 0 for a sealed ring (p_head − c_head = capacity, more than any ring holds). */
static inline unsigned int ckshim_ring_claimed_count(const ck_ring_t *r) {
    const unsigned int consumer = ck_pr_load_uint(&r->c_head);
    ck_pr_fence_load();
    const unsigned int claimed = ck_pr_load_uint(&r->p_head) - consumer;
    return claimed > r->mask ? 0 : claimed;
}

/* Single producer, multi consumer (the owner pushes; owner and thieves pop). */
static inline bool ckshim_ring_enqueue_spmc(ck_ring_t *r, ck_ring_buffer_t *b, const void *e) {
    CKSHIM_TSAN_RELEASE(r);
    return ck_ring_enqueue_spmc(r, b, e);
}
static inline bool ckshim_ring_dequeue_spmc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__dequeue_mc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}
static inline bool ckshim_ring_trydequeue_spmc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__trydequeue_mc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}

/* Multi producer, multi consumer. */
static inline bool ckshim_ring_enqueue_mpmc(ck_ring_t *r, ck_ring_buffer_t *b, const void *e) {
    CKSHIM_TSAN_RELEASE(r);
    return ck_ring_enqueue_mpmc(r, b, e);
}
static inline bool ckshim_ring_dequeue_mpmc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__dequeue_mc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}
static inline bool ckshim_ring_trydequeue_mpmc(ck_ring_t *r, const ck_ring_buffer_t *b, void *out) {
    bool ok = ckshim__trydequeue_mc(r, b, out);
    if (ok) CKSHIM_TSAN_ACQUIRE(r);
    return ok;
}

/**
 * True when every claimed slot has been consumed: p_head == c_head. Unlike an empty
 * dequeue, this also rules out a producer that claimed a ticket and has not committed
 * yet. Only meaningful from the single consumer (c_head is stable there).
 */
static inline bool ckshim_ring_is_quiescent(ck_ring_t *r) {
    unsigned int consumer = ck_pr_load_uint(&r->c_head);
    ck_pr_fence_load();
    return ck_pr_load_uint(&r->p_head) == consumer;
}

/*
 * Seal and unseal (MailboxQueue.md, "Giving the ring back"): the single consumer of an
 * empty ring moves p_head from c_head to c_head + capacity with one CAS, which is "full"
 * for every producer (the reserve compares p_head − c_head with mask, the cached c_head
 * too, which is ≤ c_head) and, being more than a ring holds, tells a sealed ring from a
 * full one (ckshim_ring_claimed_count). A producer's claim is a CAS on the same p_head: exactly one of
 * the two wins (atomicity of read-modify-writes on one location, x86-64 and AArch64 alike;
 * no other ordering is needed). Seal won: every claim fails until an unseal. Claim won:
 * the seal fails and the consumer keeps its ring. Unseal (the consumer gives up detaching)
 * puts c_head back into p_head: no claim can have moved it meanwhile.
 */
static inline bool ckshim_ring_seal(ck_ring_t *r) {
    const unsigned int consumer = r->c_head; /* only this consumer writes it */
    return ck_pr_cas_uint(&r->p_head, consumer, consumer + r->mask + 1);
}
static inline void ckshim_ring_unseal(ck_ring_t *r) { ck_pr_store_uint(&r->p_head, r->c_head); }

/* ---------------------------------------------------------------- ck_pr */

static inline void ckshim_stall(void) { ck_pr_stall(); }

/** Orders earlier atomic read-modify-writes (ck's ticket CAS) before later loads: nothing on
 *  x86 (locked instructions are full barriers), a real fence where they are not. */
static inline void ckshim_fence_atomic_load(void) { ck_pr_fence_atomic_load(); }

/* ---------------------------------------------------------------- current worker */

/*
 * The calling thread's MNScheduler Worker (an unretained pointer), NULL on every other
 * thread: MNScheduler's Worker.run/runSpare set it on entry and clear it on exit; schedule()
 * and the executors read it on every call. Inlined, a read is a load relative to the
 * thread pointer: `mov %fs:OFFSET` on x86-64 (local-exec, in an executable), `mrs
 * tpidr_el0` plus a load or two on AArch64; no pthread_getspecific call.
 *
 * Why `weak` and not `static`: this header has no .c file (CConcurrencyKit is a system
 * library target), and Swift compiles a module to one object per source file in debug
 * builds (and per thread in multi-threaded WMO), each emitting what it uses of this header.
 * A `static` variable would be one copy per object file, so Worker.swift's store would not
 * be seen by Scheduler.swift's load. A weak definition is emitted by every object that
 * references it and the linker keeps exactly one, so every access — inlined or not, from
 * any module — is to the same variable. `hidden`: a shared object that links MNScheduler
 * keeps its own copy (as each copy had its own pthread key), rather than interposing
 * another copy's. `initial-exec`: the access is a thread-pointer-relative load, never a
 * __tls_get_addr call, even in position-independent code (in an executable the linker
 * relaxes it further to local-exec); a library built with it and loaded by dlopen takes 8
 * bytes of glibc's static TLS surplus.
 * Threads: each thread reads and writes only its own copy, so no ordering is involved
 * (and ThreadSanitizer has nothing to report). A new thread starts with NULL.
 * To check: `nm` of a release binary lists one ckshim_current_worker_slot and no
 * ckshim_current_worker_get (inlined everywhere).
 */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec")))
_Thread_local void *ckshim_current_worker_slot = NULL;

/** The calling thread's Worker (unretained), or NULL off-pool. */
static inline void *ckshim_current_worker_get(void) { return ckshim_current_worker_slot; }

/** Sets (or, with NULL, clears) the calling thread's Worker. */
static inline void ckshim_current_worker_set(void *worker) { ckshim_current_worker_slot = worker; }

/*
 * The task running on this thread (unretained), or NULL: the Swift runtime's
 * swift_task_getCurrent, which withUnsafeCurrentTask calls too (without that function's
 * unspecialised generic closure). Declared here because Swift code may
 * not name a runtime symbol. Swift's calling convention and C's agree for a function with
 * no arguments that returns one pointer (x86-64: rax; AArch64: x0). For MNTaskExecutor's
 * hop test (MNTaskExecutor.swift, H2 and H3).
 */
extern void *swift_task_getCurrent(void);
static inline void *ckshim_current_task(void) { return swift_task_getCurrent(); }

/* ---------------------------------------------------------------- ring epoch */

/*
 * One process-wide ck_epoch domain for rings an MPSCQueue gave back (MailboxQueue.md,
 * "Giving the ring back"; the protocol, and why each part is safe on x86-64 and AArch64, is
 * stated once in MNScheduler.docc/RingEpochProtocol.md). What lives here:
 *  - ckshim_ring_epoch: the domain (epoch 1, no records: what ck_epoch_init leaves);
 *  - per thread: its record (registered lazily by the first section, recycled at thread
 *    exit through a pthread key's destructor) and its section depth, both `_Thread_local`
 *    with the storage rules of ckshim_current_worker_slot ("current worker" above): the
 *    producer's test "am I already inside a section?" is one thread-pointer-relative load;
 *  - the reclaimer: one record that never enters a section and holds every retired block
 *    (ck_epoch_call), with its count; every use of it is under ckshim_epoch_limbo_lock, so
 *    any thread may retire or collect (ck_epoch_poll) and a block retired by a worker that
 *    then parks is still freed by the next collector (a worker's refresh, the walker);
 *  - the mode, decided once: asymmetric (sections begin without a fence; blocks retired
 *    wait on a pending list until a collection's membarrier) where the kernel offers
 *    membarrier(PRIVATE_EXPEDITED), fenced (ck's begin, a fence at each retire) elsewhere
 *    or when MN_RING_EPOCH says `fenced` (RingEpochProtocol.md, "Choosing the mode").
 * Under CKSHIM_TSAN a section's end releases on the domain and a collection acquires on
 * it: the happens-before edge ck's grace period gives (every access made inside a section
 * that saw the block happens before its free), which TSan cannot see in ck's assembly.
 */
#include <ck_epoch.h>

__attribute__((weak, visibility("hidden"))) ck_epoch_t ckshim_ring_epoch = { .epoch = 1 };
__attribute__((weak, visibility("hidden"), tls_model("initial-exec")))
_Thread_local ck_epoch_record_t *ckshim_epoch_record_slot = NULL;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec")))
_Thread_local unsigned int ckshim_epoch_depth_slot = 0;
__attribute__((weak, visibility("hidden"))) pthread_once_t ckshim_epoch_key_once = PTHREAD_ONCE_INIT;
__attribute__((weak, visibility("hidden"))) pthread_key_t ckshim_epoch_key = 0;
__attribute__((weak, visibility("hidden"))) pthread_mutex_t ckshim_epoch_limbo_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((weak, visibility("hidden"))) ck_epoch_record_t *ckshim_epoch_reclaimer = NULL;
/* Blocks retired and not yet freed (written under the lock, read relaxed by anyone). */
__attribute__((weak, visibility("hidden"))) unsigned long ckshim_epoch_limbo = 0;
/* Asymmetric mode (RingEpochProtocol.md, "Asymmetric fences"): 1 once the process registered
 * for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), 0 where the kernel refuses it (always
 * in the portable platform layer, which has no membarrier) or
 * MN_RING_EPOCH asks for the fenced mode (RingEpochProtocol.md, "Choosing the mode"). Decided
 * once (ckshim_epoch_mode_once), before the first section begins and before the first
 * retire or collection, and never changed after. */
__attribute__((weak, visibility("hidden"))) pthread_once_t ckshim_epoch_mode_once = PTHREAD_ONCE_INIT;
__attribute__((weak, visibility("hidden"))) int ckshim_epoch_asymmetric_mode = 0;
/* Asymmetric mode: blocks retired since the last collection, not yet handed to ck_epoch_call
 * (linked through their entries' stack_entry.next; under the lock). */
__attribute__((weak, visibility("hidden"))) ck_epoch_entry_t *ckshim_epoch_pending = NULL;
/* Asymmetric mode: how many blocks the pending list holds (written under the lock; read
 * relaxed by a refresh deciding whether to take the lock at all). */
__attribute__((weak, visibility("hidden"))) unsigned long ckshim_epoch_pending_count = 0;
/* Membarriers issued by collections (under the lock; read relaxed, for tests). */
__attribute__((weak, visibility("hidden"))) unsigned long ckshim_epoch_membarriers = 0;
/* A worker's refresh (at its injection poll, and before it parks) hands the pending list
 * over only once it holds this many blocks; an explicit collection hands over any
 * (RingEpochProtocol.md, "Asymmetric fences"). Holding blocks longer is always safe: it
 * only delays their free. */
#define CKSHIM_EPOCH_REFRESH_BATCH 64

static void ckshim__epoch_decide_mode(void) {
    /* MN_RING_EPOCH=fenced (case ignored): the fenced mode whatever the kernel offers. Any
     * other value counts as `auto`; SchedulerConfiguration reports a bad one (Swift). */
    const char *requested = getenv("MN_RING_EPOCH");
    if (requested != NULL && strcasecmp(requested, "fenced") == 0) return;
    ckshim_epoch_asymmetric_mode = ckplat_membarrier_register();
}
/* The mode, deciding it on first use (every section's first use and every retire and
 * collection pass through here before they depend on it). */
static inline int ckshim__epoch_mode(void) {
    (void)pthread_once(&ckshim_epoch_mode_once, ckshim__epoch_decide_mode);
    return ckshim_epoch_asymmetric_mode;
}
/** True when sections begin without a store→load fence and collections pay for it with
 *  membarrier (RingEpochProtocol.md, "Asymmetric fences"); decides the mode if nobody has. */
static inline bool ckshim_epoch_is_asymmetric(void) { return ckshim__epoch_mode() != 0; }

static void ckshim__epoch_thread_exit(void *record) {
    ckshim_epoch_record_slot = NULL;
    ck_epoch_unregister((ck_epoch_record_t *)record);
}
static void ckshim__epoch_make_key(void) { (void)pthread_key_create(&ckshim_epoch_key, ckshim__epoch_thread_exit); }

/* A record of this domain: a recycled one, else a new one (cache-line aligned, as ck
 * declares it). Out of memory for 256 bytes is not survivable here: abort with a message. */
static __attribute__((noinline)) ck_epoch_record_t *ckshim__epoch_new_record(void) {
    ck_epoch_record_t *record = ck_epoch_recycle(&ckshim_ring_epoch, NULL);
    if (record == NULL) {
        void *memory = NULL;
        if (posix_memalign(&memory, CK_MD_CACHELINE, sizeof(ck_epoch_record_t)) != 0) {
            static const char message[] = "MNScheduler: out of memory for a ring epoch record\n";
            (void)!write(2, message, sizeof message - 1);
            abort();
        }
        record = (ck_epoch_record_t *)memory;
        ck_epoch_register(&ckshim_ring_epoch, record, NULL);
    }
    return record;
}

/* The calling thread's record, registered on first use (cold). */
static __attribute__((noinline)) ck_epoch_record_t *ckshim__epoch_register_thread(void) {
    (void)ckshim__epoch_mode();  /* decided before this thread's first section begins */
    ck_epoch_record_t *record = ckshim__epoch_new_record();
    (void)pthread_once(&ckshim_epoch_key_once, ckshim__epoch_make_key);
    (void)pthread_setspecific(ckshim_epoch_key, record);
    ckshim_epoch_record_slot = record;
    return record;
}

/** This thread's section depth: nonzero while it is inside a ring epoch section. */
static inline unsigned int ckshim_epoch_depth(void) { return ckshim_epoch_depth_slot; }

/** Enters a (possibly nested) section. */
static inline void ckshim_epoch_enter(void) {
    if (ckshim_epoch_depth_slot++ != 0) return;
    ck_epoch_record_t *record = ckshim_epoch_record_slot;
    if (CK_CC_UNLIKELY(record == NULL)) record = ckshim__epoch_register_thread();
    if (CK_CC_LIKELY(ckshim_epoch_asymmetric_mode)) {
        /* ck_epoch_begin without its store→load fence (x86-64 `xchg`, AArch64 `dmb ish`):
         * each collection's membarrier stands in for it (RingEpochProtocol.md, "Asymmetric
         * fences"). A compiler barrier keeps the order in the generated code. */
        ck_pr_store_uint(&record->active, 1);
        ck_pr_barrier();
        ck_pr_store_uint(&record->epoch, ck_pr_load_uint(&ckshim_ring_epoch.epoch));
        ck_pr_barrier();
    } else {
        ck_epoch_begin(record, NULL);
    }
}

/** Leaves the section `ckshim_epoch_enter` entered. */
static inline void ckshim_epoch_exit(void) {
    if (--ckshim_epoch_depth_slot != 0) return;
    CKSHIM_TSAN_RELEASE(&ckshim_ring_epoch);
    ck_epoch_end(ckshim_epoch_record_slot, NULL);
}

/* Where a retired ring block keeps its deferral entry and the walker's snapshot: c_head's
 * padding ("What MPSCQueue keeps in its ring block"), never read or written by a producer. */
_Static_assert(CKSHIM__RING_EPOCH_ENTRY_OFFSET + sizeof(ck_epoch_entry_t) <= CKSHIM__RING_WALKER_OFFSET,
               "the deferral entry fits before the walker's word");
static inline ck_epoch_entry_t *ckshim__ring_epoch_entry(ck_ring_t *r) {
    return (ck_epoch_entry_t *)(void *)((char *)r + CKSHIM__RING_EPOCH_ENTRY_OFFSET);
}
/** The walker's snapshot of the taken count (MPSCQueue.idleSnapshot): a word of the
 *  header's padding only the walker (under its registry lock) reads and writes. */
static inline uint64_t *ckshim_ring_walker_word(ck_ring_t *r) {
    return (uint64_t *)(void *)((char *)r + CKSHIM__RING_WALKER_OFFSET);
}

static void ckshim__ring_free_retired(ck_epoch_entry_t *entry) {
    ck_ring_t *r = (ck_ring_t *)(void *)((char *)entry - CKSHIM__RING_EPOCH_ENTRY_OFFSET);
    free(*ckshim__ring_overflow_word(r)); /* an empty overflow list (no chunks), or NULL */
    free(r);
    /* Under the lock (the collector runs the callbacks); atomic for the relaxed readers. */
    __atomic_store_n(&ckshim_epoch_limbo, ckshim_epoch_limbo - 1, __ATOMIC_RELAXED);
}

/** Hands a detached ring block to the reclaimer: freed, with its overflow list (empty: an
 *  OverflowList's base is a malloc block), once every section that may have seen it has
 *  ended. No allocation (the entry is inside the block). */
static inline void ckshim_ring_retire(ck_ring_t *r) {
    int asymmetric = ckshim__epoch_mode();
    /* Fenced mode: the detach (a store) before ck_epoch_call's load of the global epoch: ck
     * has no fence there (it expects an unlink by an atomic read-modify-write); a
     * store→load barrier (x86-64 `mfence`/locked op, AArch64 `dmb ish`), so the epoch
     * recorded is not older than every section that could still load the old address.
     * Asymmetric mode: the block waits in the pending list for the next collection, whose
     * membarrier comes before its ck_epoch_call (RingEpochProtocol.md, both). */
    if (!asymmetric) ck_pr_fence_memory();
    pthread_mutex_lock(&ckshim_epoch_limbo_lock);
    ck_epoch_entry_t *entry = ckshim__ring_epoch_entry(r);
    if (asymmetric) {
        entry->stack_entry.next = (ck_stack_entry_t *)(void *)ckshim_epoch_pending;
        ckshim_epoch_pending = entry;
        __atomic_store_n(&ckshim_epoch_pending_count, ckshim_epoch_pending_count + 1, __ATOMIC_RELAXED);
    } else {
        if (ckshim_epoch_reclaimer == NULL) ckshim_epoch_reclaimer = ckshim__epoch_new_record();
        ck_epoch_call(ckshim_epoch_reclaimer, entry, ckshim__ring_free_retired);
    }
    __atomic_store_n(&ckshim_epoch_limbo, ckshim_epoch_limbo + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ckshim_epoch_limbo_lock);
}

/** Retired blocks not yet freed (a snapshot). */
static inline unsigned long ckshim_epoch_limbo_count(void) {
    return __atomic_load_n(&ckshim_epoch_limbo, __ATOMIC_RELAXED);
}

/** Membarriers issued by collections so far (a snapshot). */
static inline unsigned long ckshim_epoch_membarrier_count(void) {
    return __atomic_load_n(&ckshim_epoch_membarriers, __ATOMIC_RELAXED);
}

/* ckshim_epoch_collect; `batched`: hand the pending list over only once it holds
 * CKSHIM_EPOCH_REFRESH_BATCH blocks (a worker's refresh). */
static inline unsigned long ckshim__epoch_collect(bool wait, bool batched) {
    unsigned long limbo = ckshim_epoch_limbo_count();
    if (limbo == 0) return 0;
    if (batched) {
        /* Nothing handed over yet (every block in limbo is pending) and less than a batch
         * pending: nothing to poll for, so no lock. Stale counts only delay a free. */
        unsigned long pending = __atomic_load_n(&ckshim_epoch_pending_count, __ATOMIC_RELAXED);
        if (limbo <= pending && pending < CKSHIM_EPOCH_REFRESH_BATCH) return limbo;
    }
    if (wait) pthread_mutex_lock(&ckshim_epoch_limbo_lock);
    else if (pthread_mutex_trylock(&ckshim_epoch_limbo_lock) != 0) return ckshim_epoch_limbo_count();
    CKSHIM_TSAN_ACQUIRE(&ckshim_ring_epoch);
    if (ckshim_epoch_pending != NULL && (!batched || ckshim_epoch_pending_count >= CKSHIM_EPOCH_REFRESH_BATCH)) {
        /* Asymmetric mode: one membarrier for every block retired since the last collection:
         * each detach before it, each ck_epoch_call's epoch load and this poll's scan after
         * it (RingEpochProtocol.md, "Asymmetric fences"). It cannot fail here: the mode's
         * decision registered for it before any section began. */
        ckplat_membarrier();
        __atomic_store_n(&ckshim_epoch_membarriers, ckshim_epoch_membarriers + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&ckshim_epoch_pending_count, 0UL, __ATOMIC_RELAXED);
        if (ckshim_epoch_reclaimer == NULL) ckshim_epoch_reclaimer = ckshim__epoch_new_record();
        while (ckshim_epoch_pending != NULL) {
            ck_epoch_entry_t *entry = ckshim_epoch_pending;
            ckshim_epoch_pending = (ck_epoch_entry_t *)(void *)entry->stack_entry.next;
            ck_epoch_call(ckshim_epoch_reclaimer, entry, ckshim__ring_free_retired);
        }
    }
    unsigned long left = ckshim_epoch_limbo;
    if (left != 0 && ckshim_epoch_reclaimer != NULL) {
        (void)ck_epoch_poll(ckshim_epoch_reclaimer);
        left = ckshim_epoch_limbo;
    }
    pthread_mutex_unlock(&ckshim_epoch_limbo_lock);
    return left;
}

/** Frees the retired blocks whose grace period is over, trying to advance the epoch
 *  (ck_epoch_poll). Call outside a section (a caller's own section would hold the epoch
 *  back). `wait`: take the lock even if another collector holds it. Returns the blocks
 *  still waiting. */
static inline unsigned long ckshim_epoch_collect(bool wait) { return ckshim__epoch_collect(wait, false); }

/** A worker's periodic refresh: leaves its section (depth 1), collects, enters again, so
 *  the epoch can advance past it. At depth 0 it only collects. Its collection hands the
 *  pending list over in batches (CKSHIM_EPOCH_REFRESH_BATCH). */
static inline void ckshim_epoch_refresh(void) {
    if (ckshim_epoch_depth_slot == 1) {
        ckshim_epoch_exit();
        (void)ckshim__epoch_collect(false, true);
        ckshim_epoch_enter();
    } else if (ckshim_epoch_depth_slot == 0) {
        (void)ckshim__epoch_collect(false, true);
    }
}

#endif /* CKSHIM_H */
