/*
 * scheduled_unit.pml — a unit's state word (Sources/MNScheduler/UnitHeader.swift)
 * driven by the scheduler around it (Scheduler.swift, Worker.swift, SchedulerCore.swift):
 * outside producers that publish work and call schedule(), workers that pop the unit and
 * run turns (T3, turn, T4/T5, re-queue into their next slot), and shutdown: `closed`, the
 * injection queue's close (InjectionQueue.swift, J2 and J4: outside pushes look at the
 * queue's `closed` before they claim, claim and publish as separate steps, and drain the
 * queue into the hand-over if they see it closed after their publish; one consumer at a
 * time, under a try-lock; close drains), a bounded wait for workers (it may give up: a
 * worker is then detached, its turn ends later), the hand-back (a second drain, then the
 * late list, each unit through abandon: T3, runAfterShutdown, T4/T5), and the after-close
 * path of a late schedule() (scheduleAfterClose -> handOver: the late list before the
 * hand-back, abandon on the caller's thread after it).
 *
 * Lifetime (UnitHeader.swift, "Lifetime"): the owner bit O (set at init: an owner, the
 * actor system's registry, holds a retain), cleared once by an `owner` process at any
 * moment (the cell's final turn deregistering it, or shutdown's removeAll: both are the
 * same step on the state word, from whichever thread); and a reference count `rc`: the
 * owner's retain while O is set, one retain per producer (its own reference, held across
 * every schedule() it makes and dropped at its end), an entry's retain (taken by a T1
 * winner that saw O clear; handed to the entry by an owner that clears O while the unit is
 * not idle; released by whoever does a T4 that reads O clear), and shutdown's hand-back
 * array (a strong reference to each unit it hands back). A T1 winner that saw O set
 * pushes an unretained entry; a T4 that reads O set releases nothing and the worker
 * touches the unit no more.
 *
 * Configuration: NPROD outside producers each publishing NWORK pieces of work, NW workers,
 * one unit (units are independent: the state word is per unit). -DNO_OWNER: a unit that
 * never has an owner (O clear throughout, no owner process: MNSerialExecutor, task lanes).
 *
 * Memory model: sequential consistency (spin). The code makes every state-word write a
 * CAS or exchange with acquire-release ordering (the file comment's Orderings). Between the
 * injection queue's publish, its try-lock and its `closed`, each side fences (seq_cst)
 * between its write and its read (Dekker's pattern, InjectionQueue J4), which is what SC
 * gives here. One unit: a consumer that holds the queue takes the only entry, so the
 * consumer's own drain after it lets go (J4) is checked by InjectionQueueTests, not here.
 *
 * Checked:
 *   R1  never queued twice: at most one queue entry (run queue, next slot, late list,
 *       hand-back) holds the unit, and a popped unit is in `scheduled`       (asserts)
 *   R2  never on two threads at once: at most one runTurn/runAfterShutdown    (assert)
 *   R3  no missed work: at quiescence every published piece of work was taken by a turn or
 *       an after-shutdown hook that started after it, nothing sits in a queue, the unit is
 *       idle (timeout assertion), and the LTL property no_missed_work
 *   L1  never touched when freed: every T1/T2 CAS, T3, turn, hook and T4/T5 asserts rc > 0
 *       (and a release asserts rc > 0 before it)                               (asserts)
 *   L2  freed exactly once, at the end: the release that makes rc 0 sets `freed` (asserting
 *       it was not), and at quiescence rc == 0, freed, O clear            (timeout assertion)
 * Bug variants (each must produce a counterexample):
 *   BUG_NO_NOTIFY            schedule() on a running unit does nothing (no T2)
 *   BUG_T4_STORE             after a turn the worker stores idle without the CAS (loses T2)
 *   BUG_NO_SETTLE            an outside push that sees the queue closed after its publish
 *                            leaves its entry there
 *   BUG_NO_CLOSE_DRAIN       shutdown's close and hand-back do not drain the injection queue
 *   BUG_OWNER_BLIND_RELEASE  the owner releases its retain when it clears O whatever the state
 *                            (the old CellTable.remove) instead of handing it to the entry
 *   BUG_T4_IGNORES_O         the worker releases after every T4 (the old runUnit) even if O is set
 *   BUG_T1_NO_RETAIN         a T1 winner that saw O clear pushes an unretained entry
 */

#ifndef NPROD
#define NPROD 3
#endif
#ifndef NWORK
#define NWORK 1
#endif
#ifndef NW
#define NW 2
#endif

#define IDLE  0
#define SCHED 1
#define RUN   2
#define NOTIF 3

byte state = IDLE;
#ifdef NO_OWNER
bool owner = false;   /* a unit without an owner (an executor's lane): entries hold its retains */
byte rc = NPROD;      /* each producer's own reference */
bool freed;
bool ownerDone = true;
#else
bool owner = true;    /* O: the owner (registry) holds a retain */
byte rc = 1 + NPROD;  /* the owner's retain + each producer's own reference */
bool freed;
bool ownerDone;
#endif
byte queued;          /* queue entries holding the unit (R1) */
byte inTurn;          /* threads inside runTurn / runAfterShutdown (R2) */
byte posted;          /* work published by producers */
byte taken;           /* work seen by a turn or hook: everything published before it started */
byte producersDone;

bool closed;
bool injClosed;       /* InjectionQueue.closed (J4) */
bool consuming;       /* InjectionQueue.consuming: the consumers' try-lock (J2) */
byte claimedInj;      /* injection entries claimed and not yet published */
byte injection;       /* published injection entries (0 or 1: R1) */
bool nextSlot[NW];    /* each worker's next slot / local queue */
byte lateUnits;       /* SchedulerCore.late.units */
bool handBackDone;
bool lateLock;
byte exited;

active proctype monitor() {
    assert(queued <= 1 && inTurn <= 1)
}

inline push(where) {
    atomic { assert(queued == 0 && state == SCHED); queued++; where++ }
}

/* L1: the unit's memory is touched (a state-word RMW, a turn). */
#define touch assert(rc > 0 && !freed)

/* swift_release: the one that reaches 0 frees (L2). */
inline release() {
    atomic {
        assert(rc > 0 && !freed);
        rc--;
        if
        :: rc == 0 -> freed = true
        :: else -> skip
        fi
    }
}

inline retain() {
    atomic { assert(rc > 0 && !freed); rc++ }
}

/* T1/T2: won = true for the caller that took idle -> scheduled, o = the O bit that CAS
   read (it decides whether the entry is retained). As the code does it: a blind
   compare-exchange from O|idle (the caller's hint: actor cells expect an owner) first,
   then a compare-exchange loop from the value seen; every CAS preserves O. Each
   compare-exchange is one atomic step over the whole byte (state and O); a failed one is
   an atomic read of the current value (into seen, seenO), which the next attempt expects. */
inline transitionToScheduled(won, seen, seenO, o) {
    atomic {                                       /* the blind T1 */
        touch;
        if
        :: state == IDLE && owner -> state = SCHED; won = true; o = true
        :: else -> seen = state; seenO = owner; won = false
        fi
    }
    if
    :: won -> skip
    :: else ->
       do
       :: atomic {                                 /* CAS(seen -> desired(seen)) succeeds */
             state == seen && owner == seenO ->
             touch;
             if
             :: seen == IDLE -> state = SCHED; won = true; o = seenO          /* T1 */
#ifndef BUG_NO_NOTIFY
             :: seen == RUN -> state = NOTIF                                   /* T2 */
#endif
             :: else -> skip     /* scheduled or notified: writes the same value (or BUG_NO_NOTIFY) */
             fi
          };
          break
       :: atomic { !(state == seen && owner == seenO) -> touch; seen = state; seenO = owner } /* CAS fails */
       od
    fi;
    seen = IDLE;
    seenO = false
}

/* The T1 winner's entry: retained iff O was clear (the caller holds its own reference). */
inline entryRetain(o) {
#ifdef BUG_T1_NO_RETAIN
    skip
#else
    if
    :: !o -> retain()
    :: else -> skip
    fi
#endif
}

/* A turn: T3 (a fetch-add scheduled -> running that reads O), the turn takes all
   published work, T4/T5: a CAS from running|O-seen to idle|O-seen; if it fails on a
   changed O (cleared during the turn) it retries with the new value, if on notified it
   re-queues (T5, O preserved). requeue = true when the unit is scheduled again afterwards
   (the caller holds the entry, retained iff O is clear); mine = true when a T4 read O
   clear: the caller owns a retain and releases it (and touches the unit no more either way). */
inline runOnce(isHook, requeue, mine) {   /* uses the caller's `oseen` */
    atomic { touch; assert(state == SCHED); state = RUN; oseen = owner; inTurn++; assert(inTurn == 1) }   /* T3 */
    touch; taken = posted;                                                            /* the turn */
    inTurn--;
#ifdef BUG_T4_STORE
    atomic { touch; state = IDLE; requeue = false; mine = !owner }
#else
    do
    :: atomic { state == RUN && owner == oseen -> touch; state = IDLE; requeue = false; mine = !owner }; break  /* T4 */
    :: atomic { state == RUN && owner != oseen -> touch; oseen = owner }                  /* T4's CAS fails: O changed */
    :: atomic { state == NOTIF -> touch; state = SCHED; requeue = true; mine = false }; break   /* T5 */
    od;
#endif
#ifdef BUG_T4_IGNORES_O
    mine = !requeue;
#endif
    oseen = false
}

/* After runOnce: a T4 that read O clear releases the retain the caller owned. */
inline afterTurn(mine) {
    if
    :: mine -> release(); mine = false
    :: else -> skip
    fi
}

/* SchedulerCore.abandon: the caller holds the unit (state scheduled, one entry). */
inline abandon(again, mine) {
    queued--;
    do
    :: runOnce(1, again, mine);
       if
       :: again -> skip
       :: else -> afterTurn(mine); break
       fi
    od
}

/* SchedulerCore.handOver: the late list before the hand-back, abandon after it. */
inline handOver(keep, again, mine) {
    atomic { !lateLock -> lateLock = true };
    if
    :: !handBackDone -> lateUnits++; keep = true
    :: else -> keep = false
    fi;
    lateLock = false;
    if
    :: !keep -> abandon(again, mine)
    :: else -> skip
    fi;
    keep = false
}

/* InjectionQueue.drainAfterClose (J4): while an entry is ready and the try-lock is free, take
   it and drain everything into the hand-over; a held lock is left to its holder, who
   drains after it lets go. */
inline drainClosed(keep, again, mine) {
    do
    :: atomic { injection > 0 && !consuming -> consuming = true };
       do
       :: atomic { injection > 0 -> injection-- }; handOver(keep, again, mine)
       :: else -> break
       od;
       consuming = false
    :: else -> break
    od
}

proctype producer() {
    byte n = 0;
    byte seen;
    bool won, keep, again, seenO, o, mine, oseen;
    do
    :: n < NWORK ->
       posted++;                                   /* make the work visible, then schedule() */
       transitionToScheduled(won, seen, seenO, o);  /* SchedulerGate.scheduleFromOutside: T1 */
       if
       :: won ->
          entryRetain(o);
          if                                       /* InjectionQueue.pushUnlessClosed */
          :: injClosed ->                          /* refused: the T1 winner hands it over */
             atomic { assert(queued == 0); queued++ }; handOver(keep, again, mine)
          :: else ->
             claimedInj++;                         /* the claim */
             atomic { claimedInj--; push(injection) };   /* the publish, a step of its own */
#ifndef BUG_NO_SETTLE
             if                                    /* settleAfterPush, after notifyParked's fence */
             :: injClosed -> drainClosed(keep, again, mine)
             :: else -> skip
             fi
#endif
          fi
       :: else -> skip
       fi;
       won = false;
       o = false;
       n++
    :: else -> break
    od;
    release();                                     /* the producer drops its reference */
    producersDone++
}

/* The owner gives up its retain (CellTable.remove in the final turn, removeAll at shutdown):
   one CAS clearing O. Idle: no entry exists, the owner releases its retain; scheduled,
   running or notified: the retain is handed to the entry / the worker holding it. */
#ifndef NO_OWNER
active proctype ownerProc() {
    bool idleThen;
    atomic { assert(owner); touch; owner = false; idleThen = (state == IDLE) };
#ifdef BUG_OWNER_BLIND_RELEASE
    idleThen = true;
#endif
    if
    :: idleThen -> release()
    :: else -> skip
    fi;
    ownerDone = true
}
#endif

proctype worker(byte w) {
    bool requeue, keep, again, mine, oseen;
end_loop:
    do
    :: closed -> break
    :: atomic { !closed && nextSlot[w] -> nextSlot[w] = false; queued-- } ->
       goto turn
    :: atomic { injection > 0 && !consuming -> consuming = true } ->   /* also just after close */
       atomic { injection--; queued-- };          /* InjectionQueue.pop under the try-lock */
       consuming = false;
       if                                          /* endConsuming: fence, then J4 */
       :: injClosed -> drainClosed(keep, again, mine)
       :: else -> skip
       fi;
turn:  runOnce(0, requeue, mine);
       if
       :: requeue ->                               /* the entry (retained iff O clear) is carried */
          if
          :: closed -> atomic { assert(queued == 0); queued++ }; handOver(keep, again, mine)   /* a turn that ended after close */
          :: else -> push(nextSlot[w])
          fi
       :: else -> afterTurn(mine)
       fi;
       requeue = false
    od;
    /* handOverLeftovers */
    if
    :: nextSlot[w] -> nextSlot[w] = false; handOver(keep, again, mine)
    :: else -> skip
    fi;
    exited++
}

active proctype shutdown() {
    byte units, held;
    bool again, mine, oseen, keep;
    closed = true;
    injClosed = true;                              /* InjectionQueue.close */
#ifndef BUG_NO_CLOSE_DRAIN
    drainClosed(keep, again, mine);
#endif
    if
    :: exited == NW -> skip
    :: skip                                        /* the timeout passed: workers detached */
    fi;
#ifndef BUG_NO_CLOSE_DRAIN
    drainClosed(keep, again, mine);                /* again, before the hand-back */
#endif
    atomic { !lateLock -> lateLock = true };
    handBackDone = true;
    units = lateUnits;
    lateUnits = 0;
    lateLock = false;
    do
    :: units > 0 -> retain(); held++; abandon(again, mine); units--   /* handedBack.append, then abandon */
    :: else -> break
    od;
    do
    :: held > 0 -> release(); held--                /* the caller drops the hand-back array */
    :: else -> break
    od
}

/* R3 at quiescence: nothing can move. */
#ifndef NO_END_CHECK
active proctype quiescence() {
end_check:
    timeout ->
    assert(producersDone == NPROD && exited == NW);
    assert(taken == posted && posted == NPROD * NWORK);
    assert(state == IDLE && queued == 0 && injection == 0 && claimedInj == 0 && lateUnits == 0);
    assert(ownerDone && !owner && rc == 0 && freed)                                   /* L2 */
}
#endif

init {
    byte i = 0;
    atomic {
        do
        :: i < NPROD -> run producer(); i++
        :: else -> break
        od;
        i = 0;
        do
        :: i < NW -> run worker(i); i++
        :: else -> break
        od
    }
}

ltl no_missed_work { [] ((posted > taken) -> <> (taken == posted)) }
