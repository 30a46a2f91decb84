/*
 * loop-scheduling.pml: a Promela model of the loop scheduling protocol in
 * PROTOCOL.md (beside this file). Checked by scripts/model-check.sh:
 *
 *   spin -a loop-scheduling.pml && gcc -O2 -DNOCLAIM -o pan pan.c && ./pan
 *
 * One loop; NP producers emit K events each; NR pool runners share one ready
 * queue; a stop process races with the producers (or never stops); its grace
 * period callback (liburcu call_rcu) runs in a process of its own; a
 * subscriber sets `pendingWake` once. Every shared-memory access of the
 * protocol (load of sched, the CAS, the enqueue, the IDLE store, each load
 * of the runnable re-check) is a step of its own, so SPIN explores every
 * interleaving between them; the C code uses sequentially consistent
 * accesses (or full barriers) for these, so sequential consistency, SPIN's
 * memory model, is the one to check. Ghost variables (counters, the
 * `runners` count, per-producer expected sequence numbers) are updated in
 * the same indivisible step as the access they describe.
 *
 * "T<n>" in the comments names the n-th row of the state table in
 * PROTOCOL.md:
 *   T1 IDLE      emit, gate open            -> SCHEDULED if this CAS wins
 *   T2 IDLE      subscriber / grace cb      -> SCHEDULED if CAS wins
 *   T3 SCHEDULED emit / flag set            -> SCHEDULED (wake() sees not IDLE)
 *   T4 SCHEDULED a runner pops it           -> RUNNING (CAS, failing is a bug)
 *   T5 RUNNING   emit / flag set            -> RUNNING (runner re-checks)
 *   T6 RUNNING   slice ends, budget used and runnable -> SCHEDULED, push
 *   T7 RUNNING   slice ends, not runnable   -> IDLE, re-check, wake()
 *   T8 RUNNING   slice ends, graceDone      -> FINISHED (drain or discard)
 *   T9 FINISHED  anything                   -> FINISHED (emits see closed)
 *
 * Build-time switches (spin -D... or #define before the include):
 *   DISCARD=1            stop mode discard: at finish the rest is discarded
 *   BROKEN_NO_RECHECK    T7 without the re-check after the IDLE store
 *                        (must fail: lost wake-up)
 *   BROKEN_DOUBLE_PUSH   wake() stores SCHEDULED without a CAS
 *                        (must fail: two runners)
 *   NP, NR, K, BUDGET, SUBSCRIBER   sizes (defaults below)
 *
 * Properties:
 *   P1 never two runners          assert(runners <= 1) on entry to RUNNING,
 *                                 and the T4 CAS never fails
 *   P2 per-producer order         assert(seq == nextSeq[p]) on each reduce
 *   P3 nothing accepted is lost   at quiescence: accepted == reduced +
 *                                 discarded, queue empty, FINISHED if stopped
 *   P4 no lost wake-up            at quiescence: !(runnable && sched == IDLE);
 *                                 SPIN's invalid-end-state check (runners
 *                                 parked at `end` are the only processes
 *                                 allowed to be blocked at the end); and the
 *                                 LTL formula `no_lost_wakeup` (pan -a)
 *   P5 stop terminates            at quiescence: closed -> sched == FINISHED
 */

#ifndef NP
#define NP 2            /* producers */
#endif
#ifndef NR
#define NR 2            /* pool runners sharing the ready queue */
#endif
#ifndef K
#define K 2             /* events per producer */
#endif
#ifndef BUDGET
#define BUDGET 1        /* events per slice: small, so T6 is exercised */
#endif
#ifndef DISCARD
#define DISCARD 0       /* 0: stop drains (reduces the rest); 1: discards it */
#endif
#ifndef SUBSCRIBER
#define SUBSCRIBER 1    /* 1: a `states` subscriber sets pendingWake once */
#endif

#define READY_CAP 4     /* ready queue; the correct protocol never holds more than 1 */
#define LOOP 0          /* the id pushed on the ready queue (one loop) */

/* sched values */
#define IDLE      0
#define SCHEDULED 1
#define RUNNING   2
#define FINISHED  3

/* ---- shared variables (PROTOCOL.md, "Shared variables") ---- */
byte sched = IDLE;
chan queue = [NP * K] of { byte, byte };    /* MPSC event queue: (producer, seq) */
chan ready = [READY_CAP] of { byte };       /* the pool's ready queue */
bool closed = false;
bool graceDone = false;
bool pendingWake = false;
bool inSection[NP];                         /* the gate: producer i is in its RCU read-side section */

/* ---- ghost variables (observation only; never read by the protocol) ---- */
byte accepted = 0;          /* emits answered .accepted */
byte reduced = 0;           /* events reduced */
byte discarded = 0;         /* events discarded at a discard stop */
byte nextSeq[NP];           /* next sequence number expected from each producer */
byte runners = 0;           /* runners inside the RUNNING section */

/* runnable, read in one indivisible step: for assertions and the LTL formula only */
#define RUNNABLE (len(queue) > 0 || pendingWake || (graceDone && sched != FINISHED))

/*
 * The runnable check as the protocol code does it: three separate loads,
 * each a step of its own. "and not finished" is implicit: only the runner
 * evaluates it, while it owns the loop (RUNNING) or just after it stored
 * IDLE; if someone else finished the loop meanwhile, wake() sees FINISHED.
 */
inline loadRunnable(r) {
    r = (len(queue) > 0);                   /* load: queue not empty */
    r = (r || pendingWake);                 /* load: pendingWake */
    r = (r || graceDone)                    /* load: graceDone */
}

/*
 * wake() = if sched == IDLE && CAS(sched, IDLE -> SCHEDULED) { push }
 * T1/T2: from IDLE, the CAS winner pushes the loop on the ready queue.
 * T3/T5/T9: sched is SCHEDULED, RUNNING or FINISHED: nothing.
 */
inline wake(won) {
    if
    :: sched == IDLE ->                     /* load of sched */
#ifdef BROKEN_DOUBLE_PUSH
        sched = SCHEDULED;                  /* BROKEN: plain store, no CAS: two wakers can both "win" */
        won = true;
#else
        d_step {                            /* CAS(sched, IDLE -> SCHEDULED), one atomic step */
            if
            :: sched == IDLE -> sched = SCHEDULED; won = true
            :: else -> won = false          /* another waker's CAS won (T3) */
            fi
        };
#endif
        if
        :: won -> ready ! LOOP; won = false /* executor.schedule(loop): push at the tail */
        :: else
        fi
    :: else                                 /* T3/T5/T9: not IDLE, nothing to do */
    fi
}

/*
 * A producer: K emits. Each emit: enter the gate section; if closed, answer
 * .stopped (T9) and leave; else enqueue (T1/T3/T5: the enqueue is a full
 * barrier), leave the section, then wake().
 */
proctype Producer(byte i) {
    byte seq = 0;
    bool won = false;
    do
    :: seq < K ->
        inSection[i] = true;                /* rcu_read_lock: enter the gate section */
        if
        :: closed ->                        /* load closed: the loop is closed (T9) */
            inSection[i] = false;           /* leave the section; answer .stopped */
            break                           /* every later emit sees closed too */
        :: else ->
            d_step { queue ! i, seq; accepted++ };          /* enqueue (full barrier); .accepted */
            inSection[i] = false;           /* rcu_read_unlock: leave the gate section */
            wake(won);                      /* T1 (CAS wins), T3, T5, T9 */
            seq++
        fi
    :: else -> break
    od
}

/*
 * The grace-period callback (liburcu call_rcu), registered by Stop after it
 * set `closed`. It may only run once every section open when closed was set
 * has been left. Modelled by observing, one producer after the other, a
 * moment (after closed was set) where that producer is outside its section.
 * A producer that enters a section after that moment sees `closed` and
 * enqueues nothing. This admits every callback time real RCU admits (and a
 * few more: it never needs all producers out at the same moment).
 * Then T2: set graceDone, then wake().
 */
proctype Grace() {
    byte i = 0;
    bool won = false;
    do
    :: i < NP -> !inSection[i]; i++         /* wait: producer i outside its section */
    :: else -> break
    od;
    graceDone = true;                       /* T2: set flag ... */
    wake(won)                               /* ... then wake() */
}

/*
 * Stop: may race with the producers, or never happen (then the loop must
 * still end idle with nothing left in its queue). Sets closed once, then
 * registers the grace-period callback.
 */
proctype Stop() {
    if
    :: closed = true;                       /* stop: no emit accepted after it is seen */
       run Grace()                          /* call_rcu(grace callback) */
    :: skip                                 /* no stop in this run */
    fi
}

#if SUBSCRIBER
/* A `states` subscriber waiting for its first state: T2 (or T3/T5/T9): set pendingWake, then wake(). */
proctype Subscriber() {
    bool won = false;
    pendingWake = true;                     /* set flag */
    wake(won)                               /* then wake() */
}
#endif

/*
 * A pool runner. Parked = blocked on the empty ready queue (a valid end
 * state: `end`). One slice per pop.
 */
proctype Runner(byte id) {
    byte p, s;                              /* a dequeued event: (producer, seq) */
    byte budget;
    bool r = false, won = false;
end:
    do
    :: ready ? _ ->                         /* pop the loop from the ready queue (T4) */
        /* T4: enter the RUNNING section with CAS(SCHEDULED -> RUNNING), one atomic step */
        d_step {
            runners++;
            assert(runners <= 1);           /* P1: never two runners */
            assert(sched == SCHEDULED);     /* P1: T4's CAS never fails */
            sched = RUNNING
        };

        /* the slice: deliver the first state to a waiting subscriber (exchange(pendingWake, false)) */
        d_step { pendingWake = false };

        /* ... then reduce up to BUDGET events */
        budget = 0;
        do
        :: budget < BUDGET ->
            if
            :: atomic { nempty(queue) ->    /* dequeue (non-empty: only this runner dequeues) */
                   queue ? p, s;
                   assert(s == nextSeq[p]); /* P2: per-producer order */
                   nextSeq[p]++;
                   reduced++;
                   budget++;
                   p = 0; s = 0 }
            :: else -> break                /* queue empty */
            fi
        :: else -> break                    /* budget used */
        od;

        /* slice end */
        if
        :: graceDone ->                     /* load graceDone */
            /* T8: graceDone: nothing more can be enqueued; drain (or discard) everything */
            do
            :: atomic { nempty(queue) ->
                   queue ? p, s;
#if DISCARD
                   discarded++;             /* stop mode discard */
#else
                   assert(s == nextSeq[p]); /* P2 */
                   nextSeq[p]++;
                   reduced++;               /* stop mode drain */
#endif
                   p = 0; s = 0
               }
            :: else -> break
            od;
            /* end streams (a waiting subscriber gets the final state), then FINISHED */
            atomic { pendingWake = false; sched = FINISHED; runners-- }
        :: else ->                          /* (graceDone was false) */
            loadRunnable(r);                /* runnable: three loads */
            if
            :: budget == BUDGET && r ->
                /* T6: budget used and runnable: store(SCHEDULED), push at the tail (fairness) */
                d_step { sched = SCHEDULED; runners--; r = false };
                ready ! LOOP
            :: else ->
                /* T7: not runnable (or budget not used): store(IDLE) (seq_cst) ... */
                d_step { sched = IDLE; runners--; r = false };
#ifndef BROKEN_NO_RECHECK
                /* ... then re-check runnable; if it now holds, wake() (Dekker pair with the enqueue) */
                loadRunnable(r);
                if
                :: r -> r = false; wake(won)
                :: else
                fi
#endif
            fi
        fi;
        budget = 0
    od
}

/*
 * The end check. `timeout` holds when no other process can move: every
 * producer, the stop, the grace callback and the subscriber have finished
 * (or are stuck), and the runners are parked. Then P3, P4 and P5 must hold.
 * If anything other than a parked runner is still blocked after this,
 * SPIN reports an invalid end state.
 */
proctype Check() {
    timeout ->
    assert(!(RUNNABLE && sched == IDLE));               /* P4: no lost wake-up */
    assert(sched == IDLE || sched == FINISHED);         /* quiescent: parked or finished */
    assert(len(ready) == 0);
    assert(len(queue) == 0);                            /* P3 */
    assert(accepted == reduced + discarded);            /* P3: every accepted event reduced exactly once (or discarded) */
#if !DISCARD
    assert(discarded == 0);
#endif
    assert(!closed || (graceDone && sched == FINISHED)) /* P5: stop terminates */
}

init {
    byte i;
    atomic {
        i = 0;
        do
        :: i < NP -> run Producer(i); i++
        :: else -> break
        od;
        i = 0;
        do
        :: i < NR -> run Runner(i); i++
        :: else -> break
        od;
        run Stop();
#if SUBSCRIBER
        run Subscriber();
#endif
        run Check()
    }
}

/*
 * P4 as a liveness formula (check with pan -a -N no_lost_wakeup): whenever
 * the loop is idle and runnable, it is eventually scheduled (or finished).
 * Every run of this model is finite, so a violation is a final state (or a
 * stuck one) that is idle and runnable.
 */
ltl no_lost_wakeup { [] ((sched == IDLE && RUNNABLE) -> <> (sched != IDLE)) }
