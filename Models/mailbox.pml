/*
 * mailbox.pml — the idle-flag hand-off of MPSCQueue (Sources/MNScheduler/MPSCQueue.swift),
 * with the ring's claim and per-slot publish, the ordered overflow list and its quiescence
 * check, and close (a producer that passed the closed check inserts after close).
 *
 * The ring (ck_ring, multi-producer/single-consumer): a producer claims ticket t by a CAS
 * on p_head (full when p_head - c_head >= CAP - 1), writes slot t % CAP and publishes it
 * with one release store mark[t % CAP] = t + 1. It waits for no other producer. The
 * consumer at c_head takes the entry iff mark[c_head % CAP] == c_head + 1, then stores
 * c_head + 1. The claim and the publish are separate steps: between them other producers
 * claim, publish and finish, and the consumer runs. Quiescent is p_head == c_head
 * (nothing claimed and unconsumed).
 *
 * Configuration (override with -D): NPROD producers each send NMSG messages (producer 1
 * sends NMSG1) into a ring of CAP slots (CAP-1 usable), the consumer drains at most BUDGET
 * per turn. The default 3 x 2 messages into a ring of 4 forces the overflow path.
 * Tickets stay below 256 in a run (byte counters never wrap), so mark arithmetic is exact.
 * -DPARKED adds a producer that claims one ticket and never publishes it (see below).
 *
 * Memory model: spin interleaves atomic statements, i.e. sequential consistency. The code
 * runs on x86-64 (TSO) and AArch64; what makes SC the right abstraction for the Dekker pair
 * (producer: ticket CAS, fence, flag load; consumer: flag store, fence, p_head load) is the
 * full store->load barrier on each side, see MPSCQueue.swift's file comment and
 * Models/README.md. BUG_STORE_LOAD_REORDER models what the missing fence would allow.
 * The slot write is part of the publish step: the mark is a release store and the
 * consumer's mark load an acquire, so a consumer that checks the mark sees the slot
 * written; one that skips the check (a bug) sees the slot's old content.
 *
 * Checked:
 *   S1  consumerIdle == false <=> exactly one consumer turn running or due   (monitor)
 *   S3  only one becameNonEmpty per idle->busy transition                     (assert)
 *   S2  every accepted item is drained by a later turn: at quiescence nothing is left
 *       (timeout assertion) and the LTL property no_lost_wakeup
 *   FIFO per producer across ring and overflow (consumer assertion); with S2 and ONCE,
 *       every accepted item is handed out exactly once
 *   ONCE the consumer hands out only the item written for ticket c_head: never a slot
 *       published in an older lap, never one not yet written                 (assert)
 *   NOWAIT (-DPARKED) a producer that claimed and never publishes stops no other
 *       producer: when nothing can move, every other producer has completed all its
 *       sends (ring or overflow) and the consumer waits only for the parked slot
 *       (timeout assertion; no invalid end state)
 * Bug variants (each must produce a counterexample, scripts/model-check.sh checks it):
 *   BUG_NO_RECHECK          goIdle returns .empty without looking again after the store
 *   BUG_STORE_LOAD_REORDER  goIdle looks before its store is visible (no fence)
 *   BUG_NO_QUIESCENCE       the overflow is taken although a ring slot is claimed,
 *                           unpublished
 *   BUG_NO_CAS              a producer claims the consumer with a plain store, not a CAS
 *   BUG_SET_NO_FENCE        the overflow append that sets ovActive also skips its fence
 *                           (only an append behind an already active overflow may)
 *   BUG_MARK_ANY_LAP        the consumer takes the entry at c_head on any nonzero mark
 *                           (one left by the previous lap too): ONCE
 *   BUG_IN_ORDER_COMMIT     a producer publishes only after ticket t - 1 did (p_tail == t,
 *                           then p_tail = t + 1): with -DPARKED, NOWAIT
 */

#ifndef NPROD
#define NPROD 3
#endif
#ifndef NMSG
#define NMSG 2
#endif
#ifndef CAP
#define CAP 4
#endif
#ifndef BUDGET
#define BUDGET 2
#endif
#ifndef NMSG1
#define NMSG1 NMSG
#endif
/* producer 1 sends NMSG1 messages, the others NMSG each */
#define TOTAL (NMSG1 + (NPROD - 1) * NMSG)

/* The ring: p_head = tickets claimed, c_head = tickets consumed; mark[i] = t + 1 once
   ticket t's item is in slot i (0: never published). `holds` is the model's record of
   which ticket's item a slot holds (t + 1), written with the item. */
byte ring[CAP];
byte mark[CAP];
byte holds[CAP];
byte p_head, c_head;
#ifdef BUG_IN_ORDER_COMMIT
byte p_tail;           /* tickets published, in order */
#endif

bool idle = true;      /* consumerIdle */
bool closed;           /* closed bit */
bool ovActive;         /* overflowActive */
bool ovLock;           /* the overflow spin lock */
byte ovItems[TOTAL];   /* overflow list */
byte ovCount;

byte due;              /* consumer turns running or due (the token of S1) */
byte accepted;         /* items inserted (ring publish or overflow append) */
byte refused;          /* enqueues refused with .closed */
byte consumed;         /* items handed out by drain (delivered, or dead-lettered after close) */
byte finished;         /* producers that are done */

#define quiescent (p_head == c_head)
/* The entry at c_head is published in this lap (the consumer's acquire load of the mark). */
#ifdef BUG_MARK_ANY_LAP
#define headReady (mark[c_head % CAP] != 0)
#else
#define headReady (mark[c_head % CAP] == c_head + 1)
#endif

/* S1 as a state invariant: checked in every reachable state. */
active proctype monitor() {
    assert(due <= 1 && (idle == (due == 0)))
}

/* The claim winner becomes responsible for exactly one turn (S3). */
inline claimConsumer() {
#ifdef BUG_NO_CAS
    if
    :: idle -> atomic { idle = false; assert(due == 0); due++ }
    :: else -> skip
    fi
#else
    if
    :: idle ->                                  /* relaxed load, then the CAS */
       atomic {
           if
           :: idle -> idle = false; assert(due == 0); due++
           :: else -> skip
           fi
       }
    :: else -> skip
    fi
#endif
}

/* The claim (ck's reserve: one CAS on p_head, "full" judged with the cached c_head; a
   stale c_head only makes it report full when the ring was full at that read, which the
   model explores too). */
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

/* Claim, then (a separate step: the producer may be preempted in between) publish. */
inline ringEnqueue(item, ok) {
    atomic {
        if
        :: CLAIM -> t = p_head; p_head++; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: ok -> publish(item)
    :: else -> skip
    fi
}

inline lock()   { atomic { !ovLock -> ovLock = true } }
inline unlock() { ovLock = false }

proctype producer(byte id) {
    byte seq = 1;
    byte t;
    bool ok, behind, early;
    do
    :: (id == 1 && seq <= NMSG1) || (id != 1 && seq <= NMSG) ->
       if
       :: closed -> refused++            /* .closed: the caller keeps (dead-letters) it */
       :: else ->
          /* (the MPSCQueueTestHook pause point: closed checked, nothing inserted) */
          ok = false;
          if
          :: !ovActive -> ringEnqueue(id * 8 + seq, ok)
          :: else -> skip
          fi;
          if
          :: !ok ->                      /* enqueueOverflow / enqueueSlow */
             lock();
             /* An append behind an overflow already active under the lock has no fence
                before its flag load (MPSCQueue.enqueueOverflow's inline case): the load
                may be satisfied as early as right after the lock's acquiring CAS, before
                the append is visible. Model: read the flag here, act on it after. */
             behind = ovActive;
#ifdef BUG_SET_NO_FENCE
             behind = true;              /* the setting append skips its fence too */
#endif
             early = idle;
             if
             :: !ovActive -> ringEnqueue(id * 8 + seq, ok)
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
             unlock()
          :: else -> skip
          fi;
          ok = false;
          if
          :: behind ->                   /* no fence: the early flag load decides */
             behind = false;
             if
             :: early ->
                atomic {
                    if
                    :: idle -> idle = false; assert(due == 0); due++
                    :: else -> skip
                    fi
                }
             :: else -> skip
             fi
          :: else -> claimConsumer()
          fi;
          early = false
       fi;
       seq++
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

active proctype consumer() {
    byte taken, item, i;
    bool more;
end_wait:
    do
    :: due == 1 ->                       /* a turn starts */
#ifdef CLOSE
       if
       :: !closed -> closed = true       /* the actor stops: closeAndTakeAll from now on */
       :: skip
       fi;
#endif
       taken = 0;
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
             :: more -> more = false          /* took the overflow: continue */
             :: else ->
                /* goIdle */
#ifdef BUG_STORE_LOAD_REORDER
                /* the look is satisfied before the store is visible (no store->load fence) */
                more = !(quiescent && !ovActive && pendingIndex >= pendingCount);
                atomic { idle = true; due-- };
#else
                atomic { idle = true; due-- };
#ifdef BUG_NO_RECHECK
                more = false;
#else
                more = !(quiescent && !ovActive && pendingIndex >= pendingCount);
#endif
#endif
                if
                :: more ->
                   atomic {
                       if
                       :: idle -> idle = false; due++; more = true   /* kept the turn: .more */
                       :: else -> more = false                        /* a producer took it */
                       fi
                   };
#ifdef PARKED
                   /* waitForCommit: a kept turn may wait for the one slot it reads next
                      (here without a bound), or end at once (.more) */
                   if
                   :: more && !quiescent && !headReady ->
end_slot:             headReady
                   :: true
                   fi
#else
                   skip
#endif
                :: else -> skip
                fi;
                break
             fi
          fi
       od;
       taken = 0;
       more = false
       /* .more: due is still 1 and the next turn follows; .empty: due is 0 (or a producer
          made it 1 again, and that turn follows) */
    od
}

#ifdef PARKED
/* A producer that claims one ticket on the ring's fast path and is never scheduled again
   (preempted for good between its claim and its publish). It may claim at any moment the
   ring has room; ending before the claim is a valid end too. */
byte parkedT = 255;
active proctype parked() {
end_unclaimed:
    atomic { CLAIM -> parkedT = p_head; p_head++ }
}
#endif

#if defined(PARKED)
/* NOWAIT at quiescence: the parked ticket stops the consumer at it, but every other
   producer completed all its sends (into the ring behind the parked slot, or the
   overflow), and the consumer stopped at the parked slot, nowhere else. */
active proctype quiescence() {
end_check:
    timeout ->
    assert(finished == NPROD && accepted + refused == TOTAL);
    assert(parkedT != 255 && c_head == parkedT)
}
#elif !defined(NO_END_CHECK)
/* S2 at quiescence: when nothing can move, every accepted item was handed out.
   (NO_END_CHECK leaves it out, to show that the LTL property alone catches a lost wake-up.) */
active proctype quiescence() {
end_check:
    timeout ->
    assert(finished == NPROD);
    assert(consumed == accepted && accepted + refused == TOTAL);
    assert(due == 0 && idle)
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
