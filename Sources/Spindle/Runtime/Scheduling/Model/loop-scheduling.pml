/*
 * loop-scheduling.pml: a Promela model of the loop scheduling protocol in
 * PROTOCOL.md (beside this file). scripts/model-check.sh checks it; by hand:
 *
 *   spin -a loop-scheduling.pml
 *   gcc -O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -o pan pan.c && ./pan -m10000 -w26
 *   gcc -O2 -DCOLLAPSE -o pan pan.c && ./pan -a -N no_lost_wakeup   (LTL)
 *   gcc -O2 -DNP -DNOCLAIM -DCOLLAPSE -o pan pan.c && ./pan -l       (cycles)
 *
 * One loop; NP producers emit K events each; NR pool runners share one
 * ready queue; a stop process races with the producers (or never stops);
 * its grace-period callback (liburcu call_rcu) is a process of its own; a
 * `states` subscriber sets `pendingWake` once. With -DGATE the loop is
 * gated (PROTOCOL.md, "The reduction gate"): a granter opens its reduction
 * gate GRANTS times, one unit of demand each, and a slice reduces an event
 * only through the open gate or once a stop was requested.
 *
 * Every shared-memory access of the protocol (the gate entry, the load of
 * `closed`, the enqueue, each load of `sched`, each CAS, the SCHEDULED and
 * IDLE stores, each load of the runnable check and re-check, the
 * pendingWake exchange, the pop; with GATE each load of the reduction gate,
 * each grant, each use of demand) is a step of its own, so SPIN explores
 * every interleaving between them. The C code uses sequentially consistent
 * accesses (or full barriers) for these, so SPIN's memory model, sequential
 * consistency, is the one to check. A few steps are merged with the access
 * before them because no step another process can take in between reads
 * or writes what they touch (merging loses no behaviour, only states);
 * each says why where it is:
 * the push on the ready queue (with the CAS or store that precedes it), the
 * gate exit (with the enqueue), the final drain (one step), call_rcu (with
 * the store of `closed`), a gated slice's loads of the reduction gate and
 * of `closed` (with its dequeue). Ghost variables (counters, `runners`,
 * expected sequence numbers) change in the step of the access they
 * describe.
 *
 * "T<n>" in the comments is the n-th row of the state table in PROTOCOL.md:
 *   T1 IDLE      emit, gate open           -> SCHEDULED if this CAS wins
 *   T2 IDLE      subscriber / grace cb     -> SCHEDULED if the CAS wins
 *   T3 SCHEDULED emit / flag set           -> SCHEDULED (wake() sees not IDLE)
 *   T4 SCHEDULED a runner pops it          -> RUNNING (CAS; failing is a bug)
 *   T5 RUNNING   emit / flag set           -> RUNNING (the runner re-checks)
 *   T6 RUNNING   slice ends, budget used and runnable -> SCHEDULED, push
 *   T7 RUNNING   slice ends, not runnable  -> IDLE, re-check, wake()
 *   T8 RUNNING   slice ends, graceDone     -> FINISHED (drain or discard)
 *   T9 FINISHED  anything                  -> FINISHED (emits see closed)
 * The slice-end conditions overlap and leave a case out, so the model reads
 * them in this order: graceDone -> T8; else budget used and runnable -> T6;
 * else (not runnable, or the queue ran dry before the budget was used)
 * -> T7.
 *
 * Switches (spin -DNAME or -DNAME=value):
 *   DISCARD=1               stop mode discard: T8 discards what is left
 *   NP, NR, K, BUDGET       producers, runners, events per producer, events
 *                           per slice (defaults 2, 2, 2, 1)
 *   SUBSCRIBER=0            no subscriber (smaller state space)
 *   BROKEN_NO_RECHECK       T7 without the re-check after the IDLE store:
 *                           must fail with lost_wakeup (and the LTL formula)
 *   BROKEN_DOUBLE_PUSH      wake() stores SCHEDULED without a CAS: must
 *                           fail P1 (T4's CAS assertion or runners <= 1)
 *   CAS_ASSERT=0            T4 takes the loop without checking the CAS
 *                           (with BROKEN_DOUBLE_PUSH: fails runners <= 1)
 *   BROKEN_LATE_SUBSCRIBER  T8 ends the streams before storing FINISHED:
 *                           must fail with subscriber_unserved
 *   INLINE                  the inline fast path: each emit may run the
 *                           scheduling its CAS won itself (wakeAndRunHere)
 *   BROKEN_INLINE_NO_CAS    (with INLINE) the inline path takes the loop
 *                           without the CAS: must fail P1
 *   DIRECT                  (with INLINE) the direct path: an emit on the
 *                           loop's own context that finds the shared queue
 *                           empty first tries to take the idle loop (CAS
 *                           IDLE -> RUNNING) and, when it wins, keeps its
 *                           event in the runner's own queue instead of
 *                           enqueueing it (takeAndRunHere)
 *   BROKEN_DIRECT_ANY_QUEUE (with DIRECT) the direct path takes the loop
 *                           whatever the shared queue holds: must fail P2
 *   IN_PLACE                (with DIRECT) the in-place path
 *                           (`emitOnOwnExecutor`): a taker's first slice may
 *                           reduce its own event alone, leaving the shared
 *                           queue to the idle re-check (T7, never T6); or
 *                           be the general slice (a loop's first slice, one
 *                           after a stop request)
 *   GATE                    the reduction gate (stream(from:)'s demand): a
 *                           granter process grants GRANTS units of demand
 *                           (default NP * K, so every event can be reduced);
 *                           a slice reduces at most one event (BUDGET 1),
 *                           and only if the gate is open or `closed`; the
 *                           runnable check reads the gate. Not with INLINE
 *   BROKEN_GATE_NO_RECHECK  (with GATE) the idle re-check reuses the gate
 *                           as loaded before the IDLE store: must fail with
 *                           lost_wakeup
 *
 * Properties:
 *   P1 never two runners       assert(runners <= 1) on entry to RUNNING, and
 *                              T4's CAS never fails (assert(sched == SCHEDULED))
 *   P2 per-producer order      assert(s == nextSeq[p]) on every reduce
 *   P3 nothing accepted lost   at the end: queue empty, accepted == reduced
 *                              (drain) or reduced + discarded (discard)
 *   P4 no lost wake-up         at the end: !(runnable && sched == IDLE); the
 *                              end is also checked by SPIN's invalid-end-state
 *                              search (only runners parked at `end` may be
 *                              blocked); and the LTL formula no_lost_wakeup
 *   P5 stop terminates         at the end: closed -> graceDone && FINISHED
 *   P6 subscriber served       at the end: the subscriber got its first
 *                              state exactly once
 *   P7 no livelock             every run is finite: no cycle in the state
 *                              graph (gcc -DNP ... && ./pan -l), so every run
 *                              reaches the end check
 *   P8 never ahead of demand   (GATE) assert(closed || reduced <= granted) on
 *                              every reduce in a slice: before a stop was
 *                              requested, no more events reduced than units
 *                              of demand granted
 * "The end" is when nothing but parked runners can move (Check, timeout).
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

#ifndef CAS_ASSERT
#define CAS_ASSERT 1    /* 0: T4 stores RUNNING without checking (only to show that
                         * BROKEN_DOUBLE_PUSH then trips assert(runners <= 1)) */
#endif

#ifdef GATE
#ifndef GRANTS
#define GRANTS (NP * K) /* units of demand the granter grants: enough for every event */
#endif
#if BUDGET != 1
#error "GATE: a gated slice reduces at most one event; leave BUDGET at 1"
#endif
#ifdef INLINE
#error "GATE is modelled without the inline and direct paths"
#endif
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
#ifdef GATE
byte credits = 0;                           /* the reduction gate: demand granted, not yet used; open == (credits > 0) */
#endif

/* ---- ghost variables (observation only; never read by the protocol) ---- */
byte accepted = 0;          /* emits answered .accepted */
byte reduced = 0;           /* events reduced */
byte discarded = 0;         /* events discarded at a discard stop */
byte nextSeq[NP];           /* next sequence number expected from each producer */
byte runners = 0;           /* runners inside the RUNNING section */
byte served = 0;            /* times the subscriber got its first state */
#ifdef GATE
byte granted = 0;           /* units of demand granted so far */
#endif

/* runnable, read in one indivisible step: for assertions and the LTL formula only */
#ifdef GATE
/* gated: queued events count only while the gate is open or a stop was requested */
#define RUNNABLE ((len(queue) > 0 && (credits > 0 || closed)) || pendingWake || (graceDone && sched != FINISHED))
#else
#define RUNNABLE (len(queue) > 0 || pendingWake || (graceDone && sched != FINISHED))
#endif

/*
 * The runnable check as the protocol code does it: three separate loads,
 * each a step of its own. "and not finished" is implicit: only the runner
 * evaluates it, while it owns the loop (RUNNING) or just after it stored
 * IDLE; if someone else finished the loop meanwhile, wake() sees FINISHED.
 */
#ifndef GATE
inline loadRunnable(r) {
    r = (len(queue) > 0);                   /* load: queue not empty */
    r = (r || pendingWake);                 /* load: pendingWake */
    r = (r || graceDone)                    /* load: graceDone */
}
#else
/*
 * Gated: (queue not empty and (gate open or stop requested)) or pendingWake
 * or graceDone, five loads. The re-check after the IDLE store loads the gate
 * again (reloadRunnable): a grant made before the store woke nobody (its
 * wake() saw RUNNING), so the re-check must see it. BROKEN_GATE_NO_RECHECK
 * keeps the gate as loaded at the slice end (`g`) and re-checks with that.
 */
inline loadRunnable(r) {
#ifdef BROKEN_GATE_NO_RECHECK
    d_step { g = (credits > 0); r = g };    /* load: the reduction gate open (BROKEN: kept in g) */
#else
    r = (credits > 0);                      /* load: the reduction gate open */
#endif
    loadRunnableAfterGate(r)
}

inline reloadRunnable(r) {
#ifdef BROKEN_GATE_NO_RECHECK
    d_step { r = g; g = false };            /* BROKEN: the gate as loaded before the IDLE store */
#else
    r = (credits > 0);                      /* load: the reduction gate open, again */
#endif
    loadRunnableAfterGate(r)
}

inline loadRunnableAfterGate(r) {
    r = (r || closed);                      /* load: closed (a stop requested) */
    r = (r && len(queue) > 0);              /* load: queue not empty */
    r = (r || pendingWake);                 /* load: pendingWake */
    r = (r || graceDone)                    /* load: graceDone */
}
#endif

/*
 * wake() = if sched == IDLE && CAS(sched, IDLE -> SCHEDULED) { push }
 * T1/T2: from IDLE, the CAS winner pushes the loop on the ready queue.
 * T3/T5/T9: sched is SCHEDULED, RUNNING or FINISHED: nothing.
 * The push is in the CAS's step: it only enables a runner's pop, and nothing
 * else reads the ready queue, so it commutes with every other step (merging
 * it loses no behaviour, only states).
 */
inline wake() {
    if
    :: sched == IDLE ->                     /* load of sched */
#ifdef BROKEN_DOUBLE_PUSH
        sched = SCHEDULED;                  /* BROKEN: plain store, no CAS: two wakers can both "win" */
        ready ! LOOP
#else
        d_step {                            /* CAS(sched, IDLE -> SCHEDULED), one atomic step */
            if
            :: sched == IDLE ->
                sched = SCHEDULED;
                ready ! LOOP                /* the winner: executor.schedule(loop), at the tail */
            :: else                         /* another waker's CAS won (T3) */
            fi
        }
#endif
    :: else                                 /* T3/T5/T9: not IDLE, nothing to do */
    fi
}

/*
 * One scheduling of the loop, by whoever took it: T4 (CAS SCHEDULED ->
 * RUNNING), the slice, and its end (T6, T7 or T8). A pool runner runs it
 * after popping the loop; with INLINE, a producer whose wake() CAS won runs
 * it itself (the inline fast path). Uses runTaken's locals (below).
 */
inline runScheduling() {
    /* T4: enter the RUNNING section with CAS(SCHEDULED -> RUNNING), one atomic step */
    d_step {
        runners++;
        assert(runners <= 1);           /* P1: never two runners */
#if CAS_ASSERT
        assert(sched == SCHEDULED);     /* P1: T4's CAS never fails */
#endif
        sched = RUNNING
    };
    runTaken()
}

/* DIRECT: the taker's own event, if it still holds one, reduced (P2 checked). */
inline reduceOwn() {
    if
    :: own ->
        d_step {
            assert(ownSeq == nextSeq[ownP]);  /* P2: per-producer order */
            nextSeq[ownP]++;
            reduced++;
            budget++;
            own = false; ownP = 0; ownSeq = 0
        }
    :: else
    fi
}

/*
 * The scheduling once the loop is RUNNING and its taker owns it: the
 * slice and its end (T6, T7 or T8). With DIRECT, a taker that holds its
 * own event (`own`, in the runner's own queue) reduces it after the
 * shared queue's events, in the first slice. Uses the caller's locals p,
 * s, budget, r, own, ownP and ownSeq.
 */
inline runTaken() {
    /* the slice (T5 for whoever emits or sets a flag meanwhile): first deliver the
     * state to a waiting subscriber: exchange(pendingWake, false) */
    d_step {
        if
        :: pendingWake -> pendingWake = false; served++
        :: else
        fi
    };

#ifndef GATE
    budget = 0;
#ifdef IN_PLACE
    /* IN_PLACE: the in-place slice reduces the taker's own event alone
     * (the shared queue waits for the idle re-check); the code falls back
     * to the general slice for a loop's first slice and after a stop
     * request: either, whenever the taker holds its event. */
    if
    :: own -> reduceOwn(); inPlace = true
    :: true -> skip
    fi;
    if
    :: !inPlace ->
#endif
    /* ... then reduce up to BUDGET events */
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
#ifdef IN_PLACE
    :: else
    fi;
#endif
#else
    /* ... then reduce at most one event, and only if the reduction gate is
     * open or a stop was requested: load the gate, load closed, dequeue.
     * One step: while this runner owns the loop nobody else closes the
     * gate or dequeues, and `closed` is only ever set, so what the loads
     * saw still holds at the dequeue (merging loses no behaviour, only
     * states). */
    budget = 0;
    if
    :: atomic { nempty(queue) && (credits > 0 || closed) ->
           queue ? p, s;
           assert(s == nextSeq[p]);     /* P2: per-producer order */
           nextSeq[p]++;
           reduced++;
           assert(closed || reduced <= granted);  /* P8: never ahead of the demand */
           budget++;
           p = 0; s = 0 };
        /* the new state to the subscriber, under its lock: it uses one unit
         * of demand, and closes the gate (store open = false) at zero. A
         * step of its own: a runner still in its idle re-check may load
         * the gate in between. */
        d_step {
            if
            :: credits > 0 -> credits--
            :: else                     /* a stop was requested: reduced without demand */
            fi
        }
    :: else                             /* queue empty, or the gate closed */
    fi;
#endif
    /* then the runner's own queue (the code drains it with a budget of its own) */
    reduceOwn();

    /* slice end */
    if
    :: graceDone ->                     /* load graceDone */
        /* T8: graceDone: nothing more can be enqueued, so the drain (or
         * discard) is one step: it commutes with every other process's
         * steps (were an event enqueued after it, the end check fails). */
        atomic {
            budget = 0;
#ifdef IN_PLACE
            inPlace = false;
#endif
            do
            :: nempty(queue) ->
                queue ? p, s;
#if DISCARD
                discarded++;            /* stop mode discard */
#else
                assert(s == nextSeq[p]);/* P2 */
                nextSeq[p]++;
                reduced++;              /* stop mode drain */
#endif
                p = 0; s = 0
            :: empty(queue) -> break
            od
        };
#ifndef BROKEN_LATE_SUBSCRIBER
        atomic { sched = FINISHED; runners-- };     /* T8: store FINISHED ... */
        /* ... then end the streams: a subscriber still waiting gets the final state */
        d_step {
            if
            :: pendingWake -> pendingWake = false; served++
            :: else
            fi
        }
#else
        /* BROKEN: end the streams, then store FINISHED (the order T8 lists its actions in):
         * a subscriber that sets its flag in between is never served */
        d_step {
            if
            :: pendingWake -> pendingWake = false; served++
            :: else
            fi
        };
        atomic { sched = FINISHED; runners-- }
#endif
    :: else ->                          /* (graceDone was false) */
        loadRunnable(r);                /* runnable: three loads */
        if
#ifdef IN_PLACE
        :: budget >= BUDGET && r && !inPlace ->
#else
        :: budget >= BUDGET && r ->
#endif
            /* T6: budget used and runnable: store(SCHEDULED), push at the tail (fairness) */
            d_step { sched = SCHEDULED; runners--; r = false; budget = 0; ready ! LOOP }
        :: else ->
            /* T7: not runnable (or budget not used): store(IDLE) (seq_cst) ... */
            d_step { sched = IDLE; runners--; r = false; budget = 0 };
#ifdef IN_PLACE
            inPlace = false;
#endif
#ifndef BROKEN_NO_RECHECK
            /* ... then re-check runnable; if it now holds, wake() (Dekker pair with the enqueue) */
#ifndef GATE
            loadRunnable(r);
#else
            reloadRunnable(r);              /* ... and with the grant */
#endif
            if
            :: r -> r = false; wake()
            :: else
            fi
#endif
        fi
    fi
}

#ifdef INLINE
/*
 * The inline fast path (PROTOCOL.md): an emit made on the loop's own serial
 * context, outside every slice (SpindleNIO's channelRead on the event
 * loop). Its wake() CAS, when it wins, does not push the loop: the producer
 * runs the scheduling itself, once it has left its gate section (left in
 * the enqueue's step above), exactly as a runner that popped it would: a
 * budget used with work left pushes the loop (T6), the idle re-check's
 * wake() pushes it (T7). In the code the emitting thread and the runner are
 * the same event loop, one at a time; here they may overlap, a superset
 * of the real interleavings, checked with one pool runner (NR=1: the event
 * loop's task queue).
 * BROKEN_INLINE_NO_CAS: the producer takes the loop on a plain load and
 * store instead of the CAS, so two emits may both run it.
 */
inline wakeAndRunHere() {
    if
    :: sched == IDLE ->                     /* load of sched */
#ifdef BROKEN_INLINE_NO_CAS
        sched = SCHEDULED; won = true       /* BROKEN: a plain store after the load */
#else
        d_step {                            /* CAS(sched, IDLE -> SCHEDULED): the winner runs it */
            if
            :: sched == IDLE -> sched = SCHEDULED; won = true
            :: else                         /* another waker's CAS won (T3) */
            fi
        }
#endif
    :: else                                 /* T3/T5/T9: not IDLE, nothing to do */
    fi;
    if
    :: won -> won = false; runScheduling()  /* T4 onward, on this thread */
    :: else
    fi
}
#endif

#ifdef DIRECT
/*
 * The direct path (PROTOCOL.md): an emit on the loop's own context, inside
 * its gate section and after its load of `closed`, finds the shared queue
 * empty and the loop idle, and takes it: CAS(IDLE -> RUNNING), which is T4
 * without the SCHEDULED step. The winner keeps its event in the runner's
 * own queue (`own`: accepted, not in the shared queue), leaves its section
 * and runs the scheduling (runTaken). Otherwise it enqueues and wakes as
 * the inline path does. The two loads are one step here (a superset: in
 * the code an event may be enqueued between them; it comes from an emit
 * concurrent with this one, so either order keeps per-producer order, and
 * the slice reduces the shared queue's events first). The queue must be
 * empty: the first slice reduces at most BUDGET of the shared queue's
 * events before the own one, so a longer queue would see an older event
 * of the same producer overtaken (what the check without it finds).
 */
inline takeAndRunHere() {
    if
#ifdef BROKEN_DIRECT_ANY_QUEUE
    :: sched == IDLE ->                     /* BROKEN: the queue is not checked */
#else
    :: len(queue) == 0 && sched == IDLE ->  /* load of the queue (empty), then of sched */
#endif
        d_step {                            /* CAS(sched, IDLE -> RUNNING): the winner runs it */
            if
            :: sched == IDLE ->
                sched = RUNNING;
                runners++;
                assert(runners <= 1);       /* P1: never two runners */
                won = true
            :: else
            fi
        }
    :: else
    fi;
    if
    :: won ->
        won = false;
        /* accepted into the runner's own queue; leave the section */
        d_step { own = true; ownP = i; ownSeq = seq; accepted++; inSection[i] = false };
        runTaken()
    :: else ->
        d_step { queue ! i, seq; accepted++; inSection[i] = false };
        wakeAndRunHere()
    fi
}
#endif

/*
 * A producer: K emits. Each emit: enter the gate section; if closed, answer
 * .stopped (T9) and leave; else enqueue (T1/T3/T5: the enqueue is a full
 * barrier), leave the section, then wake(). With INLINE, each emit may
 * also be one made on the loop's own context (wakeAndRunHere, below).
 */
proctype Producer(byte i) {
    byte seq = 0;
#ifdef INLINE
    byte p, s;                              /* runScheduling's locals, as a runner's */
    byte budget;
    bool r = false;
    bool won = false;                       /* this emit's CAS won: it runs the loop */
    bool own = false;                       /* DIRECT: the taker's own event, not yet reduced */
    byte ownP = 0, ownSeq = 0;
    bool inPlace = false;                   /* IN_PLACE: this slice is the in-place one */
#endif
    do
    :: seq < K ->
        inSection[i] = true;                /* rcu_read_lock: enter the gate section */
        if
        :: closed ->                        /* load closed: the loop is closed (T9) */
            inSection[i] = false;           /* leave the section; answer .stopped */
            break                           /* every later emit sees closed too */
        :: else ->
#ifdef DIRECT
            if                              /* which thread emits: a step of its own */
            :: skip ->                      /* another thread */
                d_step { queue ! i, seq; accepted++; inSection[i] = false };
                wake()
            :: skip -> takeAndRunHere()     /* the loop's own context */
            fi;
#else
            /* enqueue (a full barrier), .accepted, then rcu_read_unlock. Leaving
             * the section is in the enqueue's step: only Grace reads inSection,
             * and it only waits while the flag is set, so a separate step
             * would add states and no behaviour. */
            d_step { queue ! i, seq; accepted++; inSection[i] = false };
#ifdef INLINE
            if                              /* which thread emits: a step of its own */
            :: skip -> wake()               /* another thread: T1 (push), T3, T5, T9 */
            :: skip -> wakeAndRunHere()     /* the loop's own context */
            fi;
#else
            wake();                         /* T1 (this CAS wins), T3, T5, T9: nothing */
#endif
#endif
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
    do
    :: i < NP -> !inSection[i]; i++         /* wait: producer i outside its section */
    :: else -> break
    od;
    graceDone = true;                       /* T2: set flag ... */
    wake()                                  /* ... then wake() */
}

/*
 * Stop: may race with the producers, or never happen (then the loop must
 * still end idle with nothing left in its queue). Sets closed once, then
 * registers the grace-period callback.
 */
proctype Stop() {
    if
    :: atomic {
           closed = true;                   /* stop: no emit accepted after it is seen */
           run Grace()                      /* call_rcu(grace callback) */
       }
    :: skip                                 /* no stop in this run */
    fi
}

#ifdef GATE
/*
 * The granter: the gated loop's subscriber asking for more (Combine's
 * request(_:)), from any thread. Each grant: under the subscription's lock,
 * add one unit of demand and store open = true (seq_cst), then wake(), as
 * an emit's enqueue is followed by its wake() (T1/T3/T5/T9).
 */
proctype Granter() {
    byte n = 0;
    do
    :: n < GRANTS ->
        d_step { credits++; granted++; n++ };   /* demand += 1, store(open = true) ... */
        wake()                                  /* ... then wake() */
    :: else -> break
    od
}
#endif

#if SUBSCRIBER
/*
 * A `states` subscriber waiting for its first state. T2 (and T3/T5): set
 * pendingWake, then wake(). The runner that next takes the loop clears the
 * flag and delivers the state (served).
 *
 * Not in PROTOCOL.md's table: a loop that is FINISHED never runs again (T9),
 * so a subscriber whose wake() finds it FINISHED serves itself (the final
 * state, end of stream). Whoever clears the flag (exchange true -> false)
 * serves, so it is served exactly once: the subscriber here, or the runner
 * in T8, which stores FINISHED *before* it ends the streams (see
 * BROKEN_LATE_SUBSCRIBER for the other order).
 */
proctype Subscriber() {
    pendingWake = true;                     /* T2: set flag, then wake(): */
    if
    :: sched == IDLE ->                     /* load of sched */
        d_step {                            /* CAS(sched, IDLE -> SCHEDULED) */
            if
            :: sched == IDLE -> sched = SCHEDULED; ready ! LOOP
            :: else
            fi
        }
    :: sched == FINISHED ->                 /* T9: never scheduled again: serve yourself */
        d_step {
            if
            :: pendingWake -> pendingWake = false; served++
            :: else                         /* the runner's T8 served it */
            fi
        }
    :: else                                 /* T3/T5: SCHEDULED or RUNNING: the runner will see the flag */
    fi
}
#endif

/*
 * A pool runner. Parked = blocked on the empty ready queue (a valid end
 * state: `end`). One scheduling per pop.
 */
proctype Runner(byte id) {
    /* locals are reset as soon as they are dead, so that states that differ
     * only in a stale local are one state */
    byte p, s;                              /* a dequeued event: (producer, seq) */
    byte budget;                            /* events reduced in this slice */
    bool r = false;                         /* runnable, as loaded */
    bool own = false;                       /* never set: a runner has no event of its own */
    bool inPlace = false;                   /* never set: a runner has no event of its own */
    byte ownP = 0, ownSeq = 0;
#ifdef BROKEN_GATE_NO_RECHECK
    bool g = false;                         /* the gate as loaded at the slice end */
#endif
end:
    do
    :: ready ? _ ->                         /* pop the loop from the ready queue (T4) */
        runScheduling()                     /* back to the pool: park */
    od
}

/*
 * The end check. `timeout` holds when no other process can move: every
 * producer, the stop, the grace callback and the subscriber have finished
 * (or are stuck), and the runners are parked. Then P3 to P6 must hold; each
 * is a named flag so that pan's message says which one failed. If anything
 * other than a parked runner is still blocked after this, SPIN reports an
 * invalid end state.
 */
proctype Check() {
    bool lost_wakeup, not_quiescent, lost_event, stop_hangs, subscriber_unserved;
    timeout ->
    d_step {
        /* P4: idle and runnable, with nobody left to wake it */
        lost_wakeup = (RUNNABLE && sched == IDLE);
        /* every runner parked: the loop is IDLE or FINISHED, off the ready queue */
        not_quiescent = !((sched == IDLE || sched == FINISHED) && len(ready) == 0);
        /* P3: every accepted event reduced exactly once (drain), or reduced or discarded (discard) */
        lost_event = (len(queue) != 0 || accepted != reduced + discarded || (!DISCARD && discarded != 0));
        /* P5: after stop, the grace callback ran and the loop finished */
        stop_hangs = (closed && !(graceDone && sched == FINISHED));
        /* P6: the subscriber got its first state, exactly once */
        subscriber_unserved = (pendingWake || (SUBSCRIBER && served != 1))
    };
    assert(!lost_wakeup);
    assert(!not_quiescent);
    assert(!lost_event);
    assert(!stop_hangs);
    assert(!subscriber_unserved)
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
#ifdef GATE
        run Granter();
#endif
        run Check()
    }
}

/*
 * P4 as a liveness formula (pan -a -N no_lost_wakeup): whenever the loop is
 * idle and runnable, it is eventually scheduled (or finished). No weak
 * fairness is needed: every run of this model is finite (P7), so a
 * violation is a stuck state that is idle and runnable, stuttered forever.
 * BROKEN_NO_RECHECK violates it (seen with pan -a -A, which ignores the
 * assertions that would otherwise stop the search first). With GATE,
 * RUNNABLE is the gated one: queued events behind a closed gate do not
 * make the loop runnable.
 */
ltl no_lost_wakeup { [] ((sched == IDLE && RUNNABLE) -> <> (sched != IDLE)) }
