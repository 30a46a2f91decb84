/*
 * lanes.pml: a Promela model of per-producer lanes (LANES.md, beside this
 * file), the emit path issue 12 asks for: a hot producer thread gets a
 * single-producer lane of its own, so its emit is a store and one locked
 * RMW on a line no other thread writes, instead of an exchange on the shared
 * queue's tail. By hand:
 *
 *   spin -a lanes.pml
 *   gcc -O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -o pan pan.c && ./pan -m20000 -w26
 *   gcc -O2 -DNP -DNOCLAIM -DCOLLAPSE -o pan pan.c && ./pan -l -f   (cycles, weak fairness)
 *
 * What it adds to loop-scheduling.pml (whose rows T1-T9 it keeps):
 *
 *   - Per-producer order across paths. A producer's first emits go through
 *     the shared MPSC queue (inside the gate, as today). When it opens a
 *     lane it enqueues a marker, OPEN(p), on the shared queue, in the gate;
 *     the runner reads lane p only after it reduced the marker, so every
 *     event p sent through the shared queue before comes first.
 *   - The lane word: the lane's tail with two flags, BUSY (a producer is
 *     inside an emit) and RETIRED (the runner gave the lane back). A lane
 *     emit: fetch_or(BUSY) (the one locked RMW: a full barrier); if RETIRED,
 *     the lane is the producer's again: it frees it and emits through the
 *     shared queue; else load `closed` (.stopped: clear BUSY); else write
 *     the slot and store tail + 1 without BUSY (release), then wake().
 *   - The idle edge. The producer's store of the new tail is a plain store,
 *     so (x86-TSO, ARM) its later load of `sched` may be ordered before it:
 *     the model lets the load happen on either side of the store. The
 *     runner's re-check after store(IDLE) counts a lane as runnable when it
 *     holds an event *or BUSY is set*: the fetch_or and the IDLE store are
 *     both locked/seq_cst, so one of them sees the other (a producer that
 *     set BUSY before the IDLE store is seen by the re-check; one that set
 *     it after sees IDLE when it loads `sched`).
 *   - Stop. The lane path has no gate: `closed` is checked after the
 *     fetch_or. T8 (finish) waits until no lane is BUSY, then drains the
 *     shared queue (reducing markers as it goes) and every active lane.
 *   - Reclamation. The runner may retire a lane that is drained and not
 *     BUSY (a CAS on the lane word); from then on only the producer may
 *     touch it. A producer thread that exits sets EXITED; the runner frees
 *     an EXITED lane once it is drained.
 *
 * Switches (spin -DNAME or -DNAME=value):
 *   NP, NR, K, BUDGET       producers, runners, events per producer, events
 *                           per slice (defaults 2, 2, 3, 1)
 *   STOP=0                  no stop (smaller)
 *   BROKEN_NO_MARKER        a lane is active as soon as the producer opens
 *                           it: must fail P2 (per-producer order)
 *   BROKEN_IGNORE_BUSY      the idle re-check reads only the lanes' tails:
 *                           must fail P4 (lost wake-up)
 *   BROKEN_RETIRE_BUSY      the runner retires a lane without checking
 *                           BUSY: must fail P3 (an accepted event lost)
 *   BROKEN_FINISH_BUSY      T8 does not wait for BUSY lanes: must fail P3
 *
 * Properties:
 *   P1 never two runners       assert(runners <= 1) on entry to RUNNING
 *   P2 per-producer order      assert(s == nextSeq[p]) on every reduce,
 *                              whichever path the event took
 *   P3 nothing accepted lost   at the end: accepted == reduced, every queue
 *                              and active lane empty
 *   P4 no lost wake-up         at the end: !(runnable && sched == IDLE)
 *   P5 stop terminates         at the end: closed -> FINISHED
 *   P6 lane ownership          the runner never reads a lane it retired or
 *                              freed, a producer never writes a lane the
 *                              runner freed, and each lane is freed once
 *   P7 no livelock             no non-progress cycle under weak fairness
 *                              (a runner may wait for a BUSY producer, which
 *                              is always able to move on)
 */

#ifndef NP
#define NP 2
#endif
#ifndef NR
#define NR 2
#endif
#ifndef K
#define K 3
#endif
#ifndef BUDGET
#define BUDGET 1
#endif
#ifndef STOP
#define STOP 1
#endif

#define READY_CAP 4
#define LOOP 0
#define OPEN 255            /* the marker's "sequence number" */

#define IDLE      0
#define SCHEDULED 1
#define RUNNING   2
#define FINISHED  3

/* ---- shared ---- */
byte sched = IDLE;
chan queue = [NP * (K + 1)] of { byte, byte };   /* shared MPSC queue: (producer, seq or OPEN) */
chan ready = [READY_CAP] of { byte };
bool closed = false;
bool graceDone = false;
bool inSection[NP];

/* the lanes, one per producer (a reopened lane is a new lane: the old one
 * is empty and owned by nobody but the producer when it is reopened) */
chan lane[NP] = [K] of { byte };     /* published slots: the tail is len() */
bool busy[NP];                       /* lane word: BUSY */
bool retired[NP];                    /* lane word: RETIRED (runner -> producer) */
bool exited[NP];                     /* lane word: EXITED (producer thread ended) */
bool reading[NP];                     /* runner only: marker seen, lane being read */

/* ---- ghost ---- */
byte accepted = 0;
byte reduced = 0;
byte nextSeq[NP];
byte runners = 0;
byte freed[NP];                      /* times lane p (this generation) was freed */
bool producerOwns[NP];               /* the producer holds its lane (for P6) */

#define LANE_RUNNABLE(i) (reading[i] && (len(lane[i]) > 0 || busy[i]))
#define RUNNABLE (len(queue) > 0 || (graceDone && sched != FINISHED) \
                  || LANE_RUNNABLE(0) || (NP > 1 && LANE_RUNNABLE(1)))

inline wake() {
    if
    :: sched == IDLE ->
        d_step {
            if
            :: sched == IDLE -> sched = SCHEDULED; ready ! LOOP
            :: else
            fi
        }
    :: else
    fi
}

/* the runner's runnable check: one load per word */
inline loadRunnable(r) {
    r = (len(queue) > 0);
    r = (r || graceDone);
    j = 0;
    do
    :: j < NP ->
#ifdef BROKEN_IGNORE_BUSY
        r = (r || (reading[j] && len(lane[j]) > 0));
#else
        r = (r || LANE_RUNNABLE(j));      /* one load of lane j's word: tail and BUSY */
#endif
        j++
    :: else -> j = 0; break
    od
}

/* a shared-queue emit inside the gate (as loop-scheduling.pml's Producer):
 * enqueues (p, what) unless closed; sets ok */
inline sharedEmit(what, ok) {
    inSection[i] = true;
    if
    :: closed -> inSection[i] = false; ok = false
    :: else ->
        d_step {
            queue ! i, what;
            if :: what != OPEN -> accepted++ :: else fi;
            inSection[i] = false
        };
        ok = true
    fi
}

proctype Producer(byte i) {
    byte seq = 0;
    bool haveLane = false;
    bool wasRetired, ok, sawIdle;
    do
    :: seq < K ->
        if
        :: haveLane ->
            d_step { assert(freed[i] == 0); wasRetired = retired[i]; busy[i] = true };   /* fetch_or(BUSY) */
            if
            :: wasRetired ->
                /* the runner gave the lane back: it is ours alone; free it, go on through the shared queue */
                d_step { busy[i] = false; retired[i] = false; producerOwns[i] = false; haveLane = false };
                goto shared
            :: else
            fi;
            if
            :: closed -> busy[i] = false; break                  /* .stopped; every later emit sees closed */
            :: else
            fi;
            /* write the slot, store tail + 1 without BUSY (release), load sched:
             * the load may be ordered before the store (TSO / ARM) */
            if
            :: d_step { lane[i] ! seq; accepted++; busy[i] = false };
               sawIdle = (sched == IDLE)
            :: sawIdle = (sched == IDLE);
               d_step { lane[i] ! seq; accepted++; busy[i] = false }
            fi;
            if
            :: sawIdle -> sawIdle = false; wake()
            :: else
            fi;
            seq++
        :: else ->
shared:
            sharedEmit(seq, ok);
            if
            :: !ok -> break
            :: else
            fi;
            wake();
            seq++;
            /* open a lane (here or never): marker first, through the gate */
            if
            :: seq < K && !haveLane ->
                d_step { retired[i] = false; exited[i] = false; freed[i] = 0; producerOwns[i] = true };
#ifdef BROKEN_NO_MARKER
                reading[i] = true;           /* BROKEN: readable before the marker */
                haveLane = true
#else
                sharedEmit(OPEN, ok);
                if
                :: ok -> haveLane = true; wake()
                :: else -> producerOwns[i] = false; break
                fi
#endif
            :: true
            fi
        fi
    :: else -> break
    od;
    /* thread exit: fetch_or(EXITED); a RETIRED lane is freed by the producer */
    if
    :: haveLane ->
        d_step {
            if
            :: retired[i] -> producerOwns[i] = false
            :: else -> exited[i] = true
            fi
        }
    :: else
    fi
}

proctype Grace() {
    byte i = 0;
    do
    :: i < NP -> !inSection[i]; i++
    :: else -> break
    od;
    graceDone = true;
    wake()
}

proctype Stop() {
    atomic { closed = true; run Grace() }
}

/* take one item: from the shared queue (a marker activates its lane) or
 * from an active lane; any choice among those available (the code's order
 * is one of them) */
inline takeOne(took) {
    took = false;
    if
    :: atomic { len(queue) > 0 ->
           queue ? p, s;
           if
           :: s == OPEN -> assert(!reading[p]); reading[p] = true
           :: else -> assert(s == nextSeq[p]); nextSeq[p]++; reduced++
           fi;
           took = true; p = 0; s = 0 }
    :: atomic { reading[0] && len(lane[0]) > 0 ->
           assert(freed[0] == 0 && !retired[0]);
           lane[0] ? s; assert(s == nextSeq[0]); nextSeq[0]++; reduced++; took = true; s = 0 }
    :: atomic { NP > 1 && reading[1] && len(lane[1]) > 0 ->
           assert(freed[1] == 0 && !retired[1]);
           lane[1] ? s; assert(s == nextSeq[1]); nextSeq[1]++; reduced++; took = true; s = 0 }
    :: else
    fi
}

/* reclamation, at a slice's end: retire a drained lane (CAS on the lane
 * word: tail == head, no flag -> RETIRED), or free a drained EXITED one */
inline reclaim() {
    j = 0;
    do
    :: j < NP ->
        if
        :: d_step {
#ifdef BROKEN_RETIRE_BUSY
               reading[j] && !exited[j] && len(lane[j]) == 0 ->
#else
               reading[j] && !busy[j] && !exited[j] && len(lane[j]) == 0 ->
#endif
               retired[j] = true; reading[j] = false }
        :: d_step { reading[j] && exited[j] && !busy[j] && len(lane[j]) == 0 ->
               assert(freed[j] == 0); freed[j]++; reading[j] = false }
        :: true
        fi;
        j++
    :: else -> j = 0; break
    od
}

proctype Runner(byte id) {
    byte p, s, j;
    byte budget;
    bool r = false, took = false;
end:
    do
    :: ready ? _ ->
        d_step { runners++; assert(runners <= 1); assert(sched == SCHEDULED); sched = RUNNING };
        budget = 0;
        do
        :: budget < BUDGET ->
            takeOne(took);
            if
            :: took -> took = false; budget++
            :: else -> break
            fi
        :: else -> break
        od;
        if
        :: graceDone ->
            /* T8: wait until no lane is BUSY (a producer inside an emit that
             * missed `closed` is about to publish), then drain everything */
#ifndef BROKEN_FINISH_BUSY
            (!busy[0] && (NP < 2 || !busy[1]));
#endif
            atomic {
                do
                :: len(queue) > 0 ->
                    queue ? p, s;
                    if
                    :: s == OPEN -> reading[p] = true
                    :: else -> assert(s == nextSeq[p]); nextSeq[p]++; reduced++
                    fi;
                    p = 0; s = 0
                :: reading[0] && len(lane[0]) > 0 -> lane[0] ? s; assert(s == nextSeq[0]); nextSeq[0]++; reduced++; s = 0
                :: NP > 1 && reading[1] && len(lane[1]) > 0 -> lane[1] ? s; assert(s == nextSeq[1]); nextSeq[1]++; reduced++; s = 0
                :: else -> break
                od;
                sched = FINISHED; runners--; budget = 0
            }
        :: else ->
            reclaim();
            loadRunnable(r);
            if
            :: budget == BUDGET && r ->
                d_step { sched = SCHEDULED; runners--; r = false; budget = 0; ready ! LOOP }
            :: else ->
                d_step { sched = IDLE; runners--; r = false; budget = 0 };
                loadRunnable(r);
                if
                :: r -> r = false; wake()
                :: else
                fi
            fi
        fi
    od
}

proctype Check() {
    bool lost_wakeup, lost_event, stop_hangs, not_quiescent;
    timeout ->
    d_step {
        lost_wakeup = (RUNNABLE && sched == IDLE);
        not_quiescent = !((sched == IDLE || sched == FINISHED) && len(ready) == 0);
        lost_event = (len(queue) != 0 || accepted != reduced
                      || (reading[0] && len(lane[0]) != 0)
                      || (NP > 1 && reading[1] && len(lane[1]) != 0));
        stop_hangs = (closed && sched != FINISHED)
    };
    assert(!lost_wakeup);
    assert(!not_quiescent);
    assert(!lost_event);
    assert(!stop_hangs)
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
#if STOP
        if
        :: run Stop()
        :: skip
        fi;
#endif
        run Check()
    }
}
