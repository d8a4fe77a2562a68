/*
 * unit_mailbox.pml — "The unit as the idle flag" (Sources/MNScheduler/MPSCQueue.swift, that
 * section; UnitHeader.swift, Orderings, "Due units"): an event actor's mailbox queue
 * whose consumer is the unit that stores it (its owner), with no consumerIdle flag. The producer
 * inserts (a ring claim, then the publish of its slot's mark; or the ordered overflow list:
 * the ring as in Models/mailbox.pml) and then makes ONE load of
 * the unit's state word: scheduled or notified -> nothing more; idle -> T1 (CAS idle ->
 * scheduled, and the unit is pushed to a run queue); running -> T2 (CAS running ->
 * notified); a failed CAS decides again on the value it read. The consumer is a worker that
 * runs the unit only when it was pushed: T3 (scheduled -> running, then the turn's fence),
 * the drain (pending overflow items, published ring entries at c_head, then, when the ring
 * is quiescent, the whole overflow list; at most BUDGET items), and when nothing is ready
 * `runDry`: `.empty` when p_head == c_head, else `.more` (keepUnitTurn); it does not look
 * at overflowActive again (the drain's look at it, in takeOverflowIfQuiescent, is
 * enough). After the turn: `.empty` -> T4 (CAS running -> idle; on notified it fails
 * and T5 makes it scheduled, pushed again); `.more` -> T5 (scheduled), pushed again.
 * Close is optional (-DCLOSE: the turn may set `closed`, a producer that sees it refuses).
 *
 * Configuration (override with -D): NPROD producers each send NMSG messages (producer 1
 * sends NMSG1) into a ring of CAP slots (CAP-1 usable), drain budget BUDGET. Tickets stay
 * below 256 in a run, so mark arithmetic is exact. -DPARKED adds a producer that claims one
 * ticket and never publishes it (NOWAIT below).
 * -DFIRST_SLOT adds the first slot (MailboxQueue.md, "The first slot"): a producer that finds
 * no ring yet (the ring word is read once, and may be stale by the time it acts) claims the
 * slot by CAS from free, writes and publishes its item, makes a full fence and then loads
 * the word; one that loses, or finds a ring, makes or uses the ring. A turn looks at the
 * slot first: published -> takes it (spent) and ends, .more if a ring exists, else .empty;
 * claimed -> ends with .more, handing out nothing (waitForPublish's wait, given up);
 * free -> with no ring the turn ends, with one it looks at the slot again (the ring's
 * maker found it taken). runDry does not look at the slot: the
 * turn's first look, after T3, does that job (a claim it misses comes after it, and the
 * fence keeps the producer's load after its claim). A turn may also be due with nothing
 * queued (an actor's start turn, a system message): `other` schedules the unit once.
 * Not modelled: the ring given back (Models/ring_reclaim.pml; with no ring runDry returns
 * `.empty` and a producer that installs one then claims, publishes and looks at the word),
 * lingering (a delay before runDry), waitForCommit (a delay before `.more`: time is
 * abstracted; -DPARKED lets it wait for the slot without bound), more than one worker and the owner bit (Models/scheduled_unit.pml: the
 * state word's own transitions are the same here).
 *
 * Memory model: spin interleaves atomic statements, i.e. sequential consistency, made
 * exact by the barriers of "Due units": every turn begins with T3 (a locked RMW) and a full
 * fence before it reads the queue; the producer's overflow append that sets overflowActive
 * (or falls back to the ring under the lock) is followed by a seq_cst fence before its
 * load. Two places have weaker producer-side ordering, and the model makes each reordering
 * explicit as an early load (the value is read at the early point and acted on later):
 *  - a ring insert: the claim (the ticket CAS on p_head), the slot write and the publish
 *    (a release store of the slot's mark), then ckshim_fence_atomic_load, then the load.
 *    On x86-64 that fence is a compiler barrier: the claim's locked CAS is the full
 *    barrier, and the mark store may still sit in the store buffer when the load is
 *    satisfied. So the load may happen anywhere after the claim: before the publish
 *    (early) or after it. (AArch64's `dmb ish` orders the publish too: a subset.)
 *  - an append behind an overflow already active under the lock: no fence at all, so the
 *    load may be satisfied as early as right after the lock's acquiring CAS (as
 *    Models/mailbox.pml): early (after lock) or at its place (after unlock).
 * With -DDRY_TESTS_OVERFLOW runDry also tests overflowActive (as the code did before):
 * its two loads (p_head for the quiescence test, overflowActive) are then done in either
 * order (an acquire load does not order an earlier plain one on AArch64).
 * -DLOAD_AFTER_PUBLISH drops the early ring load (the load after the publish, as AArch64's
 * `dmb ish` orders it): BUG_IDLE_ON_CLAIM then passes, i.e. runDry's claim check is needed
 * for x86-64's free fence (Models/README.md, Memory model).
 * Why runDry needs no overflowActive test (the code's runDry, the default here): an
 * overflow the drain could not take (ring not quiescent) means a claimed slot, which keeps
 * the turn anyway; one set after the drain's look has a setter whose fenced load finds the
 * turn running (T2) or idle (T1). -DDRY_TESTS_OVERFLOW (with the test) passes too.
 *
 * Checked:
 *   R1  one push per idle->scheduled: the unit is scheduled iff exactly one push is
 *       outstanding, never two (monitor; and T3 asserts it pops a scheduled unit)
 *   R2  never two turns at once: T3 only from scheduled, T4/T5 only from running or
 *       notified, one turn in progress (asserts)
 *   R3  every accepted item is consumed by a later turn: at quiescence nothing is left,
 *       the unit idle and not queued (timeout assertion), and the LTL property
 *       no_lost_wakeup under weak fairness
 *   FIFO per producer across ring and overflow (consumer assertion)
 *   ONCE the worker hands out only the item written for ticket c_head: never a slot
 *       published in an older lap, never one not yet written                 (assert)
 *   NOWAIT (-DPARKED) a producer that claimed and never publishes stops no other
 *       producer: when nothing can move, every other producer has completed all its sends
 *       and the worker stopped at the parked slot only (timeout assertion)
 * Bug variants (each must produce a counterexample, scripts/model-check.sh checks it):
 *   BUG_SKIP_RUNNING    a producer that reads running does nothing (no T2)
 *   BUG_IDLE_ON_CLAIM   runDry returns .empty although a slot is claimed, unpublished
 *                       (it looks at overflowActive only)
 *   BUG_STALE_LOAD      the ring producer's load is satisfied before its claim is visible
 *                       (the missing store->load fence: the load before the claim)
 *   BUG_SET_NO_FENCE    the append that sets overflowActive also loads the word early
 *   BUG_NO_QUIESCENCE   the overflow is taken although a ring slot is claimed, unpublished
 *   BUG_MARK_ANY_LAP    the drain takes the entry at c_head on any nonzero mark (one left
 *                       by the previous lap too): ONCE
 *   BUG_IN_ORDER_COMMIT a producer publishes only after ticket t - 1 did: with -DPARKED,
 *                       NOWAIT
 *   BUG_SLOT_NO_FENCE   (-DFIRST_SLOT) the slot's producer loads the word before its
 *                       claim is visible (a relaxed CAS and no fence, on AArch64): R3
 *   BUG_SLOT_NOT_HEAD   (-DFIRST_SLOT) a turn that finds the slot free goes on with the
 *                       ring without looking at the slot again: FIFO
 */

#ifndef NPROD
#define NPROD 3
#endif
#ifndef NMSG
#define NMSG 1
#endif
#ifndef NMSG1
#define NMSG1 NMSG
#endif
#ifndef CAP
#define CAP 4
#endif
#ifndef BUDGET
#define BUDGET 2
#endif
#define TOTAL (NMSG1 + (NPROD - 1) * NMSG)

/* The unit's state word (UnitHeader.swift; the owner bit is not modelled). */
#define IDLE  0
#define SCHED 1
#define RUN   2
#define NOTIF 3
#define DONE  4   /* producer-local: nothing more to do */

byte state = IDLE;
byte pushed;           /* run-queue entries holding the unit (R1: at most one) */
byte inTurn;           /* turns between T3 and T4/T5 (R2: at most one) */

/* The ring: p_head = tickets claimed, c_head = tickets consumed; mark[i] = t + 1 once
   ticket t's item is in slot i (0: never published). `holds`: which ticket's item a slot
   holds (t + 1), the model's record, written with the item. */
byte ring[CAP];
byte mark[CAP];
byte holds[CAP];
byte p_head, c_head;
#ifdef BUG_IN_ORDER_COMMIT
byte p_tail;           /* tickets published, in order */
#endif

bool closed;           /* closed bit */
bool ovActive;         /* overflowActive */
bool ovLock;           /* the overflow spin lock */
byte ovItems[TOTAL];   /* overflow list */
byte ovCount;

#ifdef FIRST_SLOT
#define FREE      0
#define CLAIMED   1
#define PUBLISHED 2
#define SPENT     3
byte slot = FREE;      /* the first slot's state */
byte slotItem;         /* its item */
bool ringMade;         /* a producer installed the ring (the ring word is even) */
#endif

byte accepted;         /* items inserted (ring publish or overflow append) */
byte refused;          /* enqueues refused with .closed */
byte consumed;         /* items handed out by a turn */
byte finished;         /* producers that are done */

#define quiescent (p_head == c_head)
/* The entry at c_head is published in this lap (the drain's acquire load of the mark). */
#ifdef BUG_MARK_ANY_LAP
#define headReady (mark[c_head % CAP] != 0)
#else
#define headReady (mark[c_head % CAP] == c_head + 1)
#endif

/* R1 as a state invariant: checked in every reachable state. T1/T5 and their push are one
   step (only the worker's pop observes the push). */
active proctype monitor() {
    assert(pushed <= 1 && inTurn <= 1 && ((state == SCHED) == (pushed == 1)))
}

/* The producer's decision on the value its one load returned (claimConsumer -> isDue, then
   Scheduler.schedule: T1 / T2; a failed CAS decides again on the value it read). */
inline scheduleUnit(v) {
    do
    :: v == SCHED || v == NOTIF || v == DONE -> break
    :: v == IDLE ->                                   /* T1 and the push */
       atomic {
           if
           :: state == IDLE -> state = SCHED; assert(pushed == 0); pushed++; v = DONE
           :: else -> v = state
           fi
       }
    :: v == RUN ->
#ifdef BUG_SKIP_RUNNING
       v = DONE
#else
       atomic {                                       /* T2 */
           if
           :: state == RUN -> state = NOTIF; v = DONE
           :: else -> v = state
           fi
       }
#endif
    od;
    v = 0
}

/* The claim: one CAS on p_head, "full" judged with the cached c_head. */
#define CLAIM (p_head - c_head < CAP - 1)

/* Publish ticket t: the slot write and the release store of its mark, one step. No guard:
   a producer never waits for another. */
inline publish(item) {
    atomic {
#ifdef BUG_IN_ORDER_COMMIT
        p_tail == t -> p_tail = t + 1;
#endif
        ring[t % CAP] = item; holds[t % CAP] = t + 1; mark[t % CAP] = t + 1;
        accepted++; t = 0
    }
}

/* The claim, then (a separate step: the producer may be preempted in between) the
   publish. `mayLoadEarly`: the insert is followed only by ckshim_fence_atomic_load
   (x86-64: the claim's locked CAS is the barrier), so the word load may be satisfied
   before the publish is visible. */
inline ringEnqueue(item, ok, mayLoadEarly) {
#ifdef BUG_STALE_LOAD
    if
    :: mayLoadEarly -> v = state; loaded = true      /* satisfied before the claim is visible */
    :: else -> skip
    fi;
#endif
    atomic {
        if
        :: CLAIM -> t = p_head; p_head++; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: ok ->
#if !defined(BUG_STALE_LOAD) && !defined(LOAD_AFTER_PUBLISH)
       if
       :: mayLoadEarly -> v = state; loaded = true   /* after the claim, before the publish */
       :: true -> skip                               /* or at its place, after the publish */
       fi;
#endif
       publish(item)
    :: else ->
       if
       :: mayLoadEarly -> loaded = false     /* full: the overflow path decides */
       :: else -> skip
       fi
    fi
}

inline lock()   { atomic { !ovLock -> ovLock = true } }
inline unlock() { ovLock = false }

proctype producer(byte id) {
    byte seq = 1;
    byte t, v;
    bool ok, loaded, behind;
    do
    :: (id == 1 && seq <= NMSG1) || (id != 1 && seq <= NMSG) ->
       if
       :: closed -> refused++            /* .closed: the caller keeps (dead-letters) it */
       :: else ->
          ok = false;
          loaded = false;
#ifdef FIRST_SLOT
          /* enqueueInFirstSlot: only a producer that found no ring (a load that may be
             stale when the CAS comes) */
          behind = !ringMade;
          if
          :: behind ->
#ifdef BUG_SLOT_NO_FENCE
             v = state; loaded = true;                   /* satisfied before the claim */
#endif
             atomic {
                 if
                 :: slot == FREE -> slot = CLAIMED; ok = true
                 :: else -> skip
                 fi
             };
             behind = false;
             if
             :: ok ->
                atomic { slotItem = id * 8 + seq; slot = PUBLISHED; accepted++ };
                if
                :: !loaded -> v = state                   /* after the full fence */
                :: else -> skip
                fi;
                loaded = false;
                scheduleUnit(v);
                seq++;
                goto sent
             :: else -> loaded = false
             fi
          :: else -> skip
          fi;
          ringMade = true;                              /* the ring installed (or found) */
#endif
          if
          :: !ovActive -> ringEnqueue(id * 8 + seq, ok, true)
          :: else -> skip
          fi;
          if
          :: !ok ->                      /* enqueueOverflow / enqueueSlow */
             lock();
             /* Behind an overflow already active under the lock: no fence before the load,
                which may be satisfied right after the lock's acquiring CAS. */
             behind = ovActive;
#ifdef BUG_SET_NO_FENCE
             behind = true;              /* the setting append skips its fence too */
#endif
             if
             :: behind -> v = state; loaded = true   /* early */
             :: true -> skip                          /* or at its place */
             fi;
             if
             :: !ovActive -> ringEnqueue(id * 8 + seq, ok, false)  /* seq_cst fence after */
             :: else -> skip
             fi;
             if
             :: !ok ->
                ovActive = true;
                ovItems[ovCount] = id * 8 + seq;
                ovCount++;
                accepted++
             :: else -> skip
             fi;
             unlock();
             behind = false
          :: else -> skip
          fi;
          if
          :: !loaded -> v = state       /* the load at its place, after the fence */
          :: else -> skip
          fi;
          loaded = false;
          ok = false;
          scheduleUnit(v)
       fi;
       seq++;
#ifdef FIRST_SLOT
sent:  skip
#endif
    :: else -> break
    od;
    finished++
}

/* Consumer-private state. */
byte pending[TOTAL];
byte pendingCount, pendingIndex;
byte lastSeen[NPROD + 1];

inline handOut(item) {
    /* per-producer FIFO (refused items leave gaps, so strictly increasing) */
    assert(item % 8 > lastSeen[item / 8]);
    lastSeen[item / 8] = item % 8;
    consumed++;
    item = 0
}

/* The worker: runs the unit's turn each time it was pushed. */
active proctype worker() {
    byte taken, item, i;
    bool more, q, ov;
end_wait:
    do
    :: atomic {
           pushed == 1 ->                /* pop, T3 (and its fence) */
           pushed--;
           assert(state == SCHED && inTurn == 0);
           state = RUN;
           inTurn++
       };
#ifdef CLOSE
       if
       :: !closed -> closed = true       /* the actor stops: producers are refused from now on */
       :: skip
       fi;
#endif
       taken = 0;
#ifdef FIRST_SLOT
       /* drainFirstSlot: the slot is the queue's head while claimed or published. Free:
          with no ring yet nothing is queued (runDry(nil): .empty); with a ring, whose maker
          found the slot taken, look at the slot again. */
       i = slot;
       if
       :: i == FREE ->
          if
#ifdef BUG_SLOT_NOT_HEAD
          :: true -> skip                 /* goes on with the ring without a second look */
#else
          :: !ringMade -> more = false; goto turnEnd
          :: ringMade -> i = slot
#endif
          fi
       :: else -> skip
       fi;
       if
       :: i == PUBLISHED || (i == CLAIMED && slot == PUBLISHED) ->   /* (waitForPublish) */
          item = slotItem; slotItem = 0; slot = SPENT; handOut(item);
          /* the turn ends: .more when a ring holds what came after (the next turn drains
             it), else runDry(nil): .empty */
          i = 0;
          if
          :: ringMade -> more = true
          :: else -> more = false
          fi;
          goto turnEnd
       :: i == CLAIMED -> more = true; goto turnEnd
       :: else -> skip
       fi;
       i = 0;
#endif
       do
       :: taken == BUDGET -> more = true; break
       :: else ->
          if
          :: pendingIndex < pendingCount ->
             item = pending[pendingIndex]; pendingIndex++;
             if
             :: pendingIndex == pendingCount -> pendingIndex = 0; pendingCount = 0
             :: else -> skip
             fi;
             handOut(item); taken++
          :: pendingIndex >= pendingCount && headReady ->
             assert(holds[c_head % CAP] == c_head + 1);   /* ONCE: ticket c_head's item */
             item = ring[c_head % CAP]; c_head++;
             handOut(item); taken++
          :: else ->
             /* takeOverflowIfQuiescent */
             more = false;
             if
             :: ovActive ->
                lock();
#ifdef BUG_NO_QUIESCENCE
                if
                :: ovCount > 0 ->
#else
                if
                :: quiescent && ovCount > 0 ->
#endif
                   i = 0;
                   do
                   :: i < ovCount -> pending[i] = ovItems[i]; ovItems[i] = 0; i++
                   :: else -> break
                   od;
                   pendingCount = ovCount; pendingIndex = 0; ovCount = 0; i = 0;
                   ovActive = false;
                   more = true
                :: else -> skip
                fi;
                unlock()
             :: else -> skip
             fi;
             if
             :: more -> more = false          /* took the overflow: go on */
             :: else ->
                /* runDry (with DRY_TESTS_OVERFLOW, or the bug that tests only the
                   overflow: its two loads in either order) */
#if defined(DRY_TESTS_OVERFLOW) || defined(BUG_IDLE_ON_CLAIM)
                if
                :: q = quiescent; ov = ovActive
                :: ov = ovActive; q = quiescent
                fi;
#else
                q = quiescent;
#endif
#ifdef BUG_IDLE_ON_CLAIM
                more = ov;                    /* a claimed, unpublished slot ignored */
#elif defined(DRY_TESTS_OVERFLOW)
                more = !(q && !ov);           /* .more: keepUnitTurn (the old runDry) */
#else
                more = !q;                    /* .more: keepUnitTurn */
#endif
                q = false; ov = false;
#ifdef PARKED
                /* .more on a claimed slot: waitForCommit may wait for the one slot the
                   next turn reads (here without a bound), or the turn ends at once */
                if
                :: more && !quiescent && !headReady ->
end_slot:          headReady
                :: true
                fi;
#endif
                break
             fi
          fi
       od;
#ifdef FIRST_SLOT
turnEnd:
#endif
       /* T4 (.empty) or T5 (.more, or T4 failed on notified), and the push */
       atomic {
           assert(inTurn == 1 && (state == RUN || state == NOTIF));
           inTurn--;
           if
           :: !more && state == RUN -> state = IDLE
           :: else -> state = SCHED; assert(pushed == 0); pushed++
           fi
       };
       taken = 0;
       more = false
    od
}

#ifdef FIRST_SLOT
/* A turn due for another reason than an item: the spawn's start turn, a system message. */
active proctype other() {
    byte v = state;
    scheduleUnit(v)
}
#endif

#ifdef PARKED
/* A producer that claims one ticket on the ring's fast path and is never scheduled again
   (preempted for good between its claim and its publish). It may claim at any moment the
   ring has room; ending before the claim is a valid end too. */
byte parkedT = 255;
active proctype parked() {
end_unclaimed:
    atomic { CLAIM -> parkedT = p_head; p_head++ }
}

/* NOWAIT at quiescence: every other producer completed all its sends (into the ring
   behind the parked slot, or the overflow), and the drain stopped at the parked slot. */
active proctype quiescence() {
end_check:
    timeout ->
    assert(finished == NPROD && accepted + refused == TOTAL);
    assert(parkedT != 255 && c_head == parkedT)
}
#elif !defined(NO_END_CHECK)
/* R3 at quiescence: when nothing can move, every accepted item was handed out and the
   unit is idle, not queued. (NO_END_CHECK leaves it out, to show that the LTL property
   alone catches a lost wake-up.) */
active proctype quiescence() {
end_check:
    timeout ->
    assert(finished == NPROD);
    assert(consumed == accepted && accepted + refused == TOTAL);
    assert(state == IDLE && pushed == 0)
}
#endif

init {
    byte p = 1;
    atomic {
        do
        :: p <= NPROD -> run producer(p); p++
        :: else -> break
        od
    }
}

/* No lost wake-up: whenever an accepted item is not yet handed out, eventually all are. */
ltl no_lost_wakeup { [] ((accepted > consumed) -> <> (consumed == accepted)) }
