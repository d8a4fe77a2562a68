/*
 * scheduled_unit.pml — ScheduledUnit's state word (Sources/MNScheduler/ScheduledUnit.swift)
 * driven by the scheduler around it (Scheduler.swift, Worker.swift, SchedulerCore.swift):
 * outside producers that publish work and call schedule(), workers that pop the unit and
 * run turns (T3, turn, T4/T5, re-queue into their next slot), and shutdown: `closed`, the
 * wait for outside submitters, a bounded wait for workers (it may give up: a worker is
 * then detached, its turn ends later), the hand-back (injection queue + late list, each
 * unit through abandon: T3, runAfterShutdown, T4/T5), and the after-close path of a late
 * schedule() (scheduleAfterClose -> handOver: the late list before the hand-back, abandon
 * on the caller's thread after it).
 *
 * Configuration: NPROD outside producers each publishing NWORK pieces of work, NW workers,
 * one unit (units are independent: the state word is per unit).
 *
 * Memory model: sequential consistency (spin). The code makes every state-word write a
 * CAS or exchange with acquire-release ordering (the file comment's Orderings), and the
 * outside-submitter count is a seq_cst Dekker pair with `closed`.
 *
 * Checked:
 *   R1  never queued twice: at most one queue entry (run queue, next slot, late list,
 *       hand-back) holds the unit, and a popped unit is in `scheduled`       (asserts)
 *   R2  never on two threads at once: at most one runTurn/runAfterShutdown    (assert)
 *   R3  no missed work: at quiescence every published piece of work was taken by a turn or
 *       an after-shutdown hook that started after it, nothing sits in a queue, the unit is
 *       idle (timeout assertion), and the LTL property no_missed_work
 * Bug variants (each must produce a counterexample):
 *   BUG_NO_NOTIFY            schedule() on a running unit does nothing (no T2)
 *   BUG_T4_STORE             after a turn the worker stores idle without the CAS (loses T2)
 *   BUG_NO_SUBMITTER_WAIT    shutdown does not wait for outside submitters past their check
 *   BUG_LATE_PUSH            a schedule() after close pushes to the injection queue
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
byte queued;          /* queue entries holding the unit (R1) */
byte inTurn;          /* threads inside runTurn / runAfterShutdown (R2) */
byte posted;          /* work published by producers */
byte taken;           /* work seen by a turn or hook: everything published before it started */
byte producersDone;

bool closed;
byte outside;         /* SchedulerGate.outsideSubmitters */
byte injection;       /* entries in the injection queue (0 or 1: R1) */
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

/* T1/T2: won = true for the caller that took idle -> scheduled. As the code does it: a
   blind compare-exchange idle -> scheduled first, then a compare-exchange loop from the
   value seen. Each compare-exchange is one atomic step; a failed one is an atomic read of
   the current value (into seen), which the next attempt expects. */
inline transitionToScheduled(won, seen) {
    atomic {                                       /* the blind T1 */
        if
        :: state == IDLE -> state = SCHED; won = true
        :: else -> seen = state; won = false
        fi
    }
    if
    :: won -> skip
    :: else ->
       do
       :: atomic {                                 /* CAS(seen -> desired(seen)) succeeds */
             state == seen ->
             if
             :: seen == IDLE -> state = SCHED; won = true                      /* T1 */
#ifndef BUG_NO_NOTIFY
             :: seen == RUN -> state = NOTIF                                   /* T2 */
#endif
             :: else -> skip     /* scheduled or notified: writes the same value (or BUG_NO_NOTIFY) */
             fi
          };
          break
       :: atomic { state != seen -> seen = state } /* CAS fails: reads the current value */
       od
    fi;
    seen = IDLE
}

/* A turn: T3, the turn takes all published work, T4/T5. requeue = true when the unit is
   scheduled again afterwards (the caller holds it). */
inline runOnce(isHook, requeue) {
    atomic { assert(state == SCHED); state = RUN; inTurn++; assert(inTurn == 1) }   /* T3 */
    taken = posted;                                                                   /* the turn */
    inTurn--;
#ifdef BUG_T4_STORE
    atomic { if :: state == RUN -> state = IDLE; requeue = false :: else -> state = IDLE; requeue = false fi }
#else
    atomic {
        if
        :: state == RUN -> state = IDLE; requeue = false                           /* T4 */
        :: else -> state = SCHED; requeue = true                                    /* T5 */
        fi
    }
#endif
}

/* SchedulerCore.abandon: the caller holds the unit (state scheduled, one entry). */
inline abandon(again) {
    queued--;
    do
    :: runOnce(1, again);
       if
       :: again -> skip
       :: else -> break
       fi
    od
}

/* SchedulerCore.handOver: the late list before the hand-back, abandon after it. */
inline handOver(keep, again) {
    atomic { !lateLock -> lateLock = true };
    if
    :: !handBackDone -> lateUnits++; keep = true
    :: else -> keep = false
    fi;
    lateLock = false;
    if
    :: !keep -> abandon(again)
    :: else -> skip
    fi;
    keep = false
}

proctype producer() {
    byte n = 0;
    byte seen;
    bool won, keep, again;
    do
    :: n < NWORK ->
       posted++;                                   /* make the work visible, then schedule() */
       outside++;                                  /* seq_cst */
       if
       :: closed ->
          outside--;
          transitionToScheduled(won, seen);              /* scheduleAfterClose */
          if
#ifdef BUG_LATE_PUSH
          :: won -> push(injection)
#else
          :: won -> atomic { assert(queued == 0); queued++ }; handOver(keep, again)   /* T1 winner hands it over */
#endif
          :: else -> skip
          fi
       :: else ->
          transitionToScheduled(won, seen);
          if
          :: won -> push(injection)
          :: else -> skip
          fi;
          outside--
       fi;
       won = false;
       n++
    :: else -> break
    od;
    producersDone++
}

proctype worker(byte w) {
    bool requeue, keep, again;
end_loop:
    do
    :: closed -> break
    :: atomic { !closed && nextSlot[w] -> nextSlot[w] = false; queued-- } ->
       goto turn
    :: atomic { !closed && injection > 0 -> injection--; queued-- } ->
turn:  runOnce(0, requeue);
       if
       :: requeue ->
          if
          :: closed -> atomic { assert(queued == 0); queued++ }; handOver(keep, again)   /* a turn that ended after close */
          :: else -> push(nextSlot[w])
          fi
       :: else -> skip
       fi;
       requeue = false
    od;
    /* handOverLeftovers */
    if
    :: nextSlot[w] -> nextSlot[w] = false; handOver(keep, again)
    :: else -> skip
    fi;
    exited++
}

active proctype shutdown() {
    byte units;
    bool again;
    closed = true;
#ifndef BUG_NO_SUBMITTER_WAIT
    outside == 0;
#endif
    if
    :: exited == NW -> skip
    :: skip                                        /* the timeout passed: workers detached */
    fi;
    atomic { units = injection; injection = 0 };
    atomic { !lateLock -> lateLock = true };
    handBackDone = true;
    units = units + lateUnits;
    lateUnits = 0;
    lateLock = false;
    do
    :: units > 0 -> abandon(again); units--
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
    assert(state == IDLE && queued == 0 && injection == 0 && lateUnits == 0)
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
