/*
 * ring_reclaim.pml — MPSCQueue giving its ring back while idle, and swapping its small first
 * ring for a full one (Sources/MNScheduler/MPSCQueue.swift; MailboxQueue.md, "Giving the
 * ring back", "Growing the ring"): the consumer's seal, the detach under the
 * overflow lock, producers that still hold the old ring's address, the overflow path's
 * re-load of the current ring under the lock, the lazy install of a fresh ring by a CAS
 * on the ring word, and goIdle's second look at a queue that had no ring.
 *
 * The ring as in Models/mailbox.pml: a producer claims ticket t by a CAS on p_head, then
 * (a separate step) writes slot t % CAP and publishes it with mark = t + 1; the consumer
 * takes the entry at c_head iff its mark is c_head + 1. A fresh ring's marks are 0.
 *
 * What it leaves to Models/mailbox.pml: the ordered overflow list and its quiescence check
 * are modelled as there, in less detail (one list, taken whole); the idle flag is the same
 * hand-off. The grace period is abstracted: a producer's section holds every ring address
 * it loaded until its send ends (`holders`), and the collector frees a ring given back only
 * when no section holds it — what ck_epoch guarantees (RingEpoch.swift argues that part).
 *
 * Configuration (override with -D): NPROD producers each send NMSG messages; rings of CAP
 * slots (CAP-1 usable, as ck_ring); at most NGEN rings in the run (the first plus NGEN-1
 * after releases); the consumer drains at most BUDGET per turn and may give its ring back
 * after any turn that ended idle.
 *
 * Memory model: sequential consistency (interleaved atomic statements). The pieces that
 * make that sound on x86-64 and AArch64 are argued in MPSCQueue.swift: the seal (p_head
 * from c_head to c_head + CAP: "full" for every claim, and told apart from a full ring by
 * p_head - c_head > CAP - 1) and a claim are CASes on one location (p_head), so exactly
 * one wins under any model; the
 * detach and every overflow-path load of the ring word are under the overflow lock; the
 * install is a CAS before the producer's claim, fence and flag load (the Dekker pair).
 *
 * Checked:
 *   S1   idle == (no turn running or due), at most one due                  (monitor)
 *   NOGHOST no item is ever published into, or appended to the overflow of, a ring that
 *        was given back                                                      (assert)
 *   GRACE no producer claims in, publishes into or appends through a ring that was freed:
 *        a collector (ck_epoch_poll) frees a ring given back once no producer's section
 *        holds its address (ck_epoch's guarantee, argued in RingEpoch.swift)  (assert)
 *   FIFO per producer across rings and overflow                              (assert)
 *   ONCE the consumer hands out only the item written for ticket c_head of that ring:
 *        never a slot published in an older lap, never one not yet written   (assert)
 *   S2   at quiescence every accepted item was handed out exactly once       (timeout)
 *   LTL  no_lost_wakeup
 * Bug variants (each must produce a counterexample; scripts/model-check.sh):
 *   BUG_NO_SEAL          the consumer detaches after a plain quiescence check, no seal:
 *                        a producer holding the old ring claims in it between the check
 *                        and the detach, and its item is left behind (S2) or published
 *                        into a ring given back (NOGHOST)
 *   BUG_STALE_UNDER_LOCK the overflow path appends/claims with the ring it loaded before
 *                        the lock instead of re-loading the current one (NOGHOST)
 *   BUG_NO_SECOND_LOOK   goIdle with no ring returns .empty without looking for a ring
 *                        installed since (a lost wake-up)
 *   BUG_MARK_ANY_LAP     the consumer takes the entry at c_head on any nonzero mark (one
 *                        left by the previous lap too): ONCE
 *   BUG_GROW_NO_SEAL     the consumer swaps the first ring for a fresh one ("Growing the
 *                        ring") without sealing it: a producer holding the old ring claims
 *                        and publishes into it after the swap (NOGHOST)
 * Growing: when the consumer takes the overflow list from the first ring, it may seal that
 * ring and publish a fresh one carrying the list, under the same lock; between pending
 * items it may try again (growIfQuiescent), once per turn (-DNO_GROW: never).
 */

#ifndef NPROD
#define NPROD 2
#endif
#ifndef NMSG
#define NMSG 2
#endif
#ifndef CAP
#define CAP 2
#endif
#define NGEN 3          /* rings in a run (the collector is written for 3) */
#ifndef BUDGET
#define BUDGET 1
#endif
#define TOTAL (NPROD * NMSG)
#define NONE 255

/* Ring g: p_head (claimed), c_head (consumed); slot i is ring[g*CAP + i], its mark
   mk[g*CAP + i] (t + 1 once ticket t is published there, 0 in a fresh ring) and the
   model's record of which ticket's item it holds, holds[g*CAP + i] (t + 1). Tickets stay
   below 256 in a run. */
byte ph[NGEN], chd[NGEN];
byte ring[NGEN * CAP];
byte mk[NGEN * CAP];
byte holds[NGEN * CAP];
bool detached[NGEN];    /* taken out of the ring word: no new load can see it */
bool gone[NGEN];        /* retired: the collector may free it once no section holds it */
bool freed[NGEN];       /* freed: the grace period is over */
byte holders[NGEN];     /* producers' sections that may hold the ring's address */
byte cur = NONE;        /* the ring word: the installed ring, or NONE (odd: no ring) */
byte made;              /* rings installed so far */

bool idle = true;       /* consumerIdle */
bool ovActive;          /* overflowActive */
bool ovLock;
bool listMade[NGEN];    /* ring g's block holds an overflow list: it is never given back */
byte ovItems[TOTAL];
byte ovCount;

byte due, accepted, consumed, finished;

active proctype monitor() {
    assert(due <= 1 && (idle == (due == 0)))
}

inline lock()   { atomic { !ovLock -> ovLock = true } }
inline unlock() { ovLock = false }

/* The lazy install (installRing): a CAS from "no ring" to a fresh block; a loser takes the
   winner's. With NGEN rings used up the producer waits (the model's bound, not the code's). */
inline loadRing(g) {
    atomic {
        if
        :: cur != NONE -> g = cur
        :: cur == NONE && made < NGEN -> cur = made; made++; g = cur
        fi;
        holders[g]++                      /* inside the producer's section */
    }
}

/* The section ends (end of the send): the addresses it loaded may be freed from now on. */
inline dropRing(g) { holders[g]-- }

/* The claim, then (a separate step) the slot write and the publish of its mark, with no
   guard (the model of mailbox.pml). A sealed ring (p_head == c_head + CAP) refuses every
   claim. */
inline ringEnqueue(g, item, ok) {
    atomic {
        assert(!freed[g]);                /* a claim reads and CASes the ring's header */
        if
        :: ph[g] - chd[g] < CAP - 1 -> t = ph[g]; ph[g]++; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: ok ->
       atomic {
           assert(!detached[g] && !freed[g]);
           ring[g * CAP + t % CAP] = item; holds[g * CAP + t % CAP] = t + 1;
           mk[g * CAP + t % CAP] = t + 1;
           accepted++; t = 0
       }
    :: else -> skip
    fi
}

/* The entry at ring g's c_head is published in this lap (the consumer's acquire load). */
#ifdef BUG_MARK_ANY_LAP
#define headReady(r) (mk[(r) * CAP + chd[r] % CAP] != 0)
#else
#define headReady(r) (mk[(r) * CAP + chd[r] % CAP] == chd[r] + 1)
#endif

inline claimConsumer() {
    if
    :: idle -> atomic { if :: idle -> idle = false; assert(due == 0); due++ :: else -> skip fi }
    :: else -> skip
    fi
}

proctype producer(byte id) {
    byte seq = 1, t, g, h = NONE;
    bool ok;
    do
    :: seq <= NMSG ->
       loadRing(g);                       /* g may be given back from here on */
       ok = false;
       if
       :: !ovActive -> ringEnqueue(g, id * 8 + seq, ok)
       :: else -> skip
       fi;
       if
       :: !ok ->                          /* enqueueOverflow / enqueueSlow, under the lock */
          lock();
#ifdef BUG_STALE_UNDER_LOCK
          h = g;
#else
          loadRing(h);                    /* currentRingUnderLock */
#endif
          if
          :: !ovActive -> ringEnqueue(h, id * 8 + seq, ok)
          :: else -> skip
          fi;
          if
          :: !ok -> assert(!detached[h] && !freed[h]); listMade[h] = true; ovActive = true;
                    ovItems[ovCount] = id * 8 + seq; ovCount++; accepted++
          :: else -> skip
          fi;
          unlock()
       :: else -> skip
       fi;
       claimConsumer();                   /* after the fence (mailbox.pml models its absence) */
       atomic { dropRing(g); if :: h != NONE -> dropRing(h) :: else -> skip fi };
       g = 0; h = NONE;
       seq++
    :: else -> break
    od;
    finished++
}

byte pending[TOTAL];
byte pendingCount, pendingIndex;
byte lastSeen[NPROD + 1];

inline handOut(item) {
    assert(item % 8 > lastSeen[item / 8]);
    lastSeen[item / 8] = item % 8;
    consumed++;
    item = 0
}

active proctype consumer() {
    byte taken, item, i, g;
    bool more, wentIdle, grew, retried;
end_wait:
    do
    :: due == 1 ->
       taken = 0; wentIdle = false;
       g = cur;                           /* the drain loads the ring once, at its start */
       do
       :: taken == BUDGET -> break
       :: else ->
          if
#ifndef NO_GROW
          :: pendingIndex < pendingCount && g == 0 && cur == 0 && made < NGEN && !retried ->
             /* growIfQuiescent: the retry between pending runs, after a take whose seal lost */
             retried = true;
             lock();
#ifdef BUG_GROW_NO_SEAL
             grew = true;
#else
             atomic {
                 if
                 :: ph[g] == chd[g] -> ph[g] = chd[g] + CAP; grew = true
                 :: else -> grew = false
                 fi
             };
#endif
             if
             :: grew -> atomic { cur = made; made++; detached[g] = true; listMade[cur] = listMade[g] }
             :: else -> skip
             fi;
             unlock();
             if
             :: grew -> gone[g] = true; g = cur; grew = false
             :: else -> skip
             fi
#endif
          :: pendingIndex < pendingCount ->
             item = pending[pendingIndex]; pendingIndex++;
             if
             :: pendingIndex == pendingCount -> pendingIndex = 0; pendingCount = 0
             :: else -> skip
             fi;
             handOut(item); taken++
          :: pendingIndex >= pendingCount && g != NONE && headReady(g) ->
             assert(holds[g * CAP + chd[g] % CAP] == chd[g] + 1);   /* ONCE */
             item = ring[g * CAP + chd[g] % CAP]; chd[g]++;
             handOut(item); taken++
          :: else ->
             more = false;
             if
             :: g != NONE && ovActive ->
                lock();
                if
                :: ph[g] == chd[g] && ovCount > 0 ->
#ifndef NO_GROW
                   /* Growing the ring: the first ring is the small one; the consumer seals
                      it and publishes a fresh one carrying the list, under the lock. */
                   if
                   :: g == 0 && cur == 0 && made < NGEN ->
#ifdef BUG_GROW_NO_SEAL
                      grew = true;
#else
                      atomic {            /* the seal: one CAS on p_head */
                          if
                          :: ph[g] == chd[g] -> ph[g] = chd[g] + CAP; grew = true
                          :: else -> grew = false
                          fi
                      };
#endif
                      if
                      :: grew -> atomic { cur = made; made++; detached[g] = true; listMade[cur] = listMade[g] }
                      :: else -> skip
                      fi
                   :: else -> skip
                   fi;
#endif
                   i = 0;
                   do
                   :: i < ovCount -> pending[i] = ovItems[i]; ovItems[i] = 0; i++
                   :: else -> break
                   od;
                   pendingCount = ovCount; pendingIndex = 0; ovCount = 0; i = 0;
                   ovActive = false; more = true
                :: else -> skip
                fi;
                unlock();
                if
                :: grew -> gone[g] = true; g = cur; grew = false   /* retire; go on with the new ring */
                :: else -> skip
                fi
             :: else -> skip
             fi;
             if
             :: more -> more = false
             :: else ->
                /* goIdle: the store, then the look: at the drain's ring, or — it had
                   none — at the ring word again (a producer may have installed one) */
                atomic { idle = true; due-- };
                if
                :: g != NONE -> more = !(ph[g] == chd[g] && !ovActive && pendingIndex >= pendingCount)
                :: else ->
#ifdef BUG_NO_SECOND_LOOK
                   more = false
#else
                   more = (cur != NONE)   /* keepTurn(ring) */
#endif
                fi;
                if
                :: more ->
                   atomic {
                       if
                       :: idle -> idle = false; due++; more = true
                       :: else -> more = false
                       fi
                   }
                :: else -> wentIdle = true
                fi;
                break
             fi
          fi
       od;
       /* releaseIdleRing, still inside the turn (no other turn can start before it ends) */
       if
       :: wentIdle && cur != NONE && !ovActive && !listMade[cur] && made < NGEN ->
          g = cur;                        /* releaseIdleRing loads the ring word again */
#ifdef BUG_NO_SEAL
          if
          :: ph[g] == chd[g] -> more = true
          :: else -> more = false
          fi;
#else
          atomic {                        /* the seal: one CAS on p_head */
              if
              :: ph[g] == chd[g] -> ph[g] = chd[g] + CAP; more = true
              :: else -> more = false
              fi
          };
#endif
          if
          :: more ->
             lock();
             if
             :: !ovActive && !listMade[g] -> atomic { cur = NONE; detached[g] = true }  /* the detach */
             :: else -> ph[g] = chd[g]; more = false                      /* unseal */
             fi;
             unlock();
             if
             :: more -> gone[g] = true            /* the retire (ck_epoch_call), after the detach */
             :: else -> skip
             fi
          :: else -> skip
          fi
       :: else -> skip                    /* keep the ring (or the model's bound is reached) */
       fi;
       taken = 0; more = false; wentIdle = false; retried = false; g = 0
    od
}

/* The collector (ck_epoch_poll): frees, in one step, every ring given back that no section
   holds any more. (Written for NGEN == 3, the configuration checked.) */
#define FREEABLE(g) (gone[g] && !freed[g] && holders[g] == 0)
active proctype collector() {
    byte g;
end_collect:
    do
    :: atomic {
           FREEABLE(0) || FREEABLE(1) || FREEABLE(2) ->
           g = 0;
           do
           :: g < NGEN -> if :: FREEABLE(g) -> freed[g] = true :: else -> skip fi; g++
           :: else -> break
           od;
           g = 0
       }
    od
}

#ifndef NO_END_CHECK
active proctype quiescence() {
end_check:
    timeout ->
    assert(finished == NPROD);
    assert(consumed == accepted && accepted == TOTAL);
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

ltl no_lost_wakeup { [] ((accepted > consumed) -> <> (consumed == accepted)) }
