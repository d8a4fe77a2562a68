/*
 * ring_release.pml — giving an idle ring back (MPSCQueue.swift, "Giving the ring back";
 * RingEpoch.swift): the consumer seals the ring (a CAS of p_head from c_head to
 * c_head + mask), detaches it under the overflow lock (re-checking overflowActive) and
 * retires it; producers that loaded the ring's address before the detach fail their claim
 * ("full") and take the overflow path, which re-loads the ring under the lock and installs
 * a fresh one when there is none. The idle-flag hand-off is mailbox.pml's, kept here in its
 * fenced form (every producer fences before its flag load).
 *
 * Rings: ring 0 exists at the start (the actor took a message before); at most NR rings in
 * all (one release when NR = 2). A producer holds a ring's address inside a section
 * (`holders`); a retired ring is freed only when no section holds it (the grace period of
 * ck_epoch, abstracted: RingEpoch.swift argues ck's part). Memory model: sequential
 * consistency (see mailbox.pml and Models/README.md: the seal is a CAS on the same p_head
 * a claim CASes, so atomicity alone orders them).
 *
 * Checked: nothing accepted is lost or handed out twice (at quiescence consumed ==
 * accepted == TOTAL, which fails if an item is committed into a detached ring), per-producer
 * FIFO (consumer assertion), no access to a freed ring (assertions), S1 (monitor).
 * Bug variant: BUG_NO_SEAL — the release checks p_head == c_head instead of sealing: a
 * producer that loaded the ring before the detach claims in it afterwards, and its item is
 * lost (a counterexample).
 */

#ifndef NPROD
#define NPROD 2
#endif
#ifndef NMSG
#define NMSG 2
#endif
#ifndef CAP
#define CAP 4
#endif
#ifndef NR
#define NR 2
#endif
#define TOTAL (NPROD * NMSG)
#define NONE 255

byte slots[NR * CAP];
byte ph[NR], pt[NR], ch[NR];   /* p_head, p_tail, c_head of each ring */
byte cur = 0;                   /* the queue's ring (NONE: given back) */
byte rings = 1;                 /* rings allocated so far */
bool retired[NR], freed[NR];
byte holders[NR];               /* sections holding each ring's address */

bool idle = true;
bool ovActive, ovLock;
byte ovItems[TOTAL];
byte ovCount;

byte due, accepted, consumed, finished, releases;

active proctype monitor() {
    assert(due <= 1 && (idle == (due == 0)))
}

inline lock()   { atomic { !ovLock -> ovLock = true } }
inline unlock() { ovLock = false }

/* Loads the ring's address (installing a fresh ring if there is none: the CAS from "no
   ring"), inside the producer's section. */
inline loadRing(r) {
    atomic {
        if
        :: cur == NONE -> assert(rings < NR); cur = rings; rings++
        :: else -> skip
        fi;
        r = cur;
        holders[r]++
    }
}

/* Claim (ticket CAS), then slot write and in-order commit. */
inline ringEnqueue(r, item, ok) {
    atomic {
        assert(!freed[r]);
        if
        :: ph[r] - ch[r] < CAP - 1 -> t = ph[r]; ph[r]++; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: ok -> atomic { pt[r] == t -> assert(!freed[r]); slots[r * CAP + t % CAP] = item; pt[r] = t + 1; accepted++; t = 0 }
    :: else -> skip
    fi
}

proctype producer(byte id) {
    byte seq = 1, t, r, r2;
    bool ok;
    do
    :: seq <= NMSG ->
       loadRing(r);
       ok = false;
       if
       :: !ovActive -> ringEnqueue(r, id * 8 + seq, ok)
       :: else -> skip
       fi;
       if
       :: !ok ->
          lock();
          loadRing(r2);                  /* enqueueSlow: the ring re-loaded under the lock */
          if
          :: !ovActive -> ringEnqueue(r2, id * 8 + seq, ok)
          :: else -> skip
          fi;
          if
          :: !ok -> ovActive = true; ovItems[ovCount] = id * 8 + seq; ovCount++; accepted++
          :: else -> skip
          fi;
          unlock();
          holders[r2]--
       :: else -> skip
       fi;
       holders[r]--;                     /* the section ends */
       atomic {                          /* claimConsumer, after the fence */
           if
           :: idle -> idle = false; assert(due == 0); due++
           :: else -> skip
           fi
       };
       ok = false; r = 0; r2 = 0;
       seq++
    :: else -> break
    od;
    finished++
}

/* The grace period: a retired ring is freed once no section holds it. (Blocks while
   there is nothing to free, so a timeout still means quiescence.) */
#define freeable(i) (retired[i] && !freed[i] && holders[i] == 0)
active proctype collector() {
end_collect:
    do
    :: atomic { freeable(0) -> freed[0] = true }
    :: atomic { freeable(1) -> freed[1] = true }   /* NR = 2 */
    od
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
    byte item, i, r;
    bool more, sealed;
end_wait:
    do
    :: due == 1 ->
       r = cur;
       do
       :: pendingIndex < pendingCount ->
          item = pending[pendingIndex]; pendingIndex++;
          if
          :: pendingIndex == pendingCount -> pendingIndex = 0; pendingCount = 0
          :: else -> skip
          fi;
          handOut(item)
       :: pendingIndex >= pendingCount && r != NONE && ch[r] != pt[r] ->
          assert(!freed[r]);
          item = slots[r * CAP + ch[r] % CAP]; ch[r]++;
          handOut(item)
       :: else ->
          more = false;
          if
          :: ovActive ->
             lock();
             if
             :: (r == NONE || ph[r] == ch[r]) && ovCount > 0 ->
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
          :: more -> more = false
          :: else ->
             /* goIdle; a ring-less drain looks at the ring word again after its fence */
             atomic { idle = true; due-- };
             if
             :: r == NONE -> r = cur
             :: else -> skip
             fi;
             more = !((r == NONE || ph[r] == ch[r]) && !ovActive && pendingIndex >= pendingCount);
             if
             :: more ->
                atomic {
                    if
                    :: idle -> idle = false; due++; more = true
                    :: else -> more = false
                    fi
                }
             :: else -> skip
             fi;
             if
             :: more -> more = false; r = cur    /* .more: the next turn follows */
             :: else ->
                /* .empty: the turn may give the ring back (a walk asked, or not) */
                if
                :: cur != NONE && rings < NR && !ovActive && pendingIndex >= pendingCount ->
                   r = cur;
                   sealed = false;
#ifdef BUG_NO_SEAL
                   sealed = (ph[r] == ch[r]);
#else
                   atomic {
                       if
                       :: ph[r] == ch[r] -> ph[r] = ch[r] + CAP - 1; sealed = true
                       :: else -> skip
                       fi
                   };
#endif
                   if
                   :: sealed ->
                      lock();
                      if
                      :: !ovActive -> cur = NONE; retired[r] = true; releases++
                      :: else ->
#ifndef BUG_NO_SEAL
                         ph[r] = ch[r]        /* unseal: the ring stays */
#else
                         skip
#endif
                      fi;
                      unlock()
                   :: else -> skip
                   fi;
                   sealed = false
                :: skip
                fi;
                break
             fi
          fi
       od;
       r = 0
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
