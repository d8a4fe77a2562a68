/*
 * mailbox.pml — the idle-flag hand-off of MPSCQueue (Sources/MNScheduler/MPSCQueue.swift),
 * with the ck_ring claim/commit, the ordered overflow list and its quiescence check, and
 * close (a producer that passed the closed check inserts after close).
 *
 * Configuration (override with -D): NPROD producers each send NMSG messages into a ring of
 * CAP slots (CAP-1 usable, as ck_ring), the consumer drains at most BUDGET per turn. The
 * default 3 x 2 messages into a ring of 4 forces the overflow path.
 *
 * Memory model: spin interleaves atomic statements, i.e. sequential consistency. The code
 * runs on x86-64 (TSO) and AArch64; what makes SC the right abstraction for the Dekker pair
 * (producer: ticket CAS, fence, flag load; consumer: flag store, fence, p_head load) is the
 * full store->load barrier on each side, see MPSCQueue.swift's file comment and
 * Models/README.md. BUG_STORE_LOAD_REORDER models what the missing fence would allow.
 *
 * Checked:
 *   S1  consumerIdle == false <=> exactly one consumer turn running or due   (monitor)
 *   S3  only one becameNonEmpty per idle->busy transition                     (assert)
 *   S2  every accepted item is drained by a later turn: at quiescence nothing is left
 *       (timeout assertion) and the LTL property no_lost_wakeup
 *   FIFO per producer across ring and overflow (consumer assertion)
 * Bug variants (each must produce a counterexample, scripts/model-check.sh checks it):
 *   BUG_NO_RECHECK          goIdle returns .empty without looking again after the store
 *   BUG_STORE_LOAD_REORDER  goIdle looks before its store is visible (no fence)
 *   BUG_NO_QUIESCENCE       the overflow is taken although a ring slot is claimed, uncommitted
 *   BUG_NO_CAS              a producer claims the consumer with a plain store, not a CAS
 *   BUG_SET_NO_FENCE        the overflow append that sets ovActive also skips its fence
 *                           (only an append behind an already active overflow may)
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

/* ck_ring: p_head = claimed tickets, p_tail = committed, c_head = consumed. */
byte ring[CAP];
byte p_head, p_tail, c_head;

bool idle = true;      /* consumerIdle */
bool closed;           /* closed bit */
bool ovActive;         /* overflowActive */
bool ovLock;           /* the overflow spin lock */
byte ovItems[TOTAL];   /* overflow list */
byte ovCount;

byte due;              /* consumer turns running or due (the token of S1) */
byte accepted;         /* items inserted (ring commit or overflow append) */
byte refused;          /* enqueues refused with .closed */
byte consumed;         /* items handed out by drain (delivered, or dead-lettered after close) */
byte finished;         /* producers that are done */

#define quiescent (p_head == c_head)

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

/* ck_ring_enqueue_reserve_mpmc + slot write + in-order commit (ckshim_ring_enqueue_mp_yielding). */
inline ringEnqueue(item, ok) {
    atomic {
        if
        :: p_head - c_head < CAP - 1 -> t = p_head; p_head++; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: ok ->
       /* slot write and in-order commit: one step (the consumer reads a slot only after
          its commit, so the write's position before it is invisible) */
       atomic { p_tail == t -> ring[t % CAP] = item; p_tail = t + 1; accepted++; t = 0 }
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
          :: pendingIndex >= pendingCount && c_head != p_tail ->
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
                   }
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

/* S2 at quiescence: when nothing can move, every accepted item was handed out.
   (NO_END_CHECK leaves it out, to show that the LTL property alone catches a lost wake-up.) */
#ifndef NO_END_CHECK
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
