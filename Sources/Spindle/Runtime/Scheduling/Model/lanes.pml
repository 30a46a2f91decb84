/*
 * lanes.pml: per-producer lanes without a locked instruction on the emit
 * path (LANES.md, "v2, as built on the branch"). By hand:
 *
 *   spin -a lanes.pml
 *   gcc -O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -o pan pan.c && ./pan -m40000 -w26
 *
 * A lane emit is plain stores, so the model gives every producer a store
 * buffer (x86-TSO): its stores to shared memory (BUSY, the published
 * count) wait in a FIFO and reach memory at a step of their own; its loads
 * of other variables (`closed`, `sched`) read memory and may so pass its
 * own earlier stores. A locked instruction (the shared queue's exchange,
 * the CAS in wake(), the fetch_or that lets a lane go) drains the buffer
 * first. The runner's membarrier drains every producer's buffer (each CPU
 * runs a full barrier). The runner's own stores are sequentially
 * consistent (its IDLE store is an exchange).
 *
 * One loop; NP producers emit K events each; one runner (two runners are
 * loop-scheduling.pml's subject); a stop racing the emits, or none. Each
 * producer may open one lane (after any shared-queue emit) and may let it go
 * (only when drained: its thread's table slot is wanted, or the loop idled
 * too often), then goes on through the shared queue.
 *
 * Switches:
 *   NP, K                   producers, events each (2, 2)
 *   STOP=0                  no stop
 *   BROKEN_NO_MEMBARRIER    the re-check and the stop's last check skip the
 *                           membarrier: must fail (lost wake-up or event)
 *   PRODUCER_FENCE          no membarrier (other systems, old kernels,
 *                           SPINDLE_PORTABLE): each producer fences after
 *                           its BUSY store, and the runner's re-check and
 *                           the stop's last check only fence themselves
 *   BROKEN_LETGO_UNDRAINED  a producer lets its lane go without waiting for
 *                           it to drain: must fail per-producer order
 *   BROKEN_COUNT_FIRST      the runner reads a lane's published count, then
 *                           its BUSY (an order the code once had):
 *                           must fail (a stop finishes with an event in a
 *                           lane)
 *
 * Properties: per-producer order across shared queue, marker and lane
 * (assert on every reduce); at the end nothing accepted is lost, the loop is
 * not idle while runnable, a stop has finished it, every lane EXITED by its
 * producer was freed by the runner at most once.
 */

#ifndef NP
#define NP 2
#endif
#ifndef K
#define K 2
#endif
#ifndef STOP
#define STOP 1
#endif

#define OPEN 255
#define IDLE      0
#define SCHEDULED 1
#define RUNNING   2
#define FINISHED  3

/* store-buffer entries: (what, value) */
#define ST_BUSY  1      /* busy[i] = value */
#define ST_PUB   2      /* publish: lane[i] ! value (the count store, with the slot) */

byte sched = IDLE;
chan queue = [NP * (K + 1)] of { byte, byte };
chan ready = [2] of { byte };
bool closed = false;
bool graceDone = false;
bool inSection[NP];

chan lane[NP] = [K] of { byte };     /* what the runner can see: published slots */
bool busy[NP];                       /* in memory */
bool exited[NP];
bool reading[NP];                    /* runner only */
chan sb[NP] = [3] of { byte, byte }; /* each producer's store buffer */

/* ghost */
byte accepted = 0;
byte reduced = 0;
byte nextSeq[NP];
byte freed[NP];
byte consumedBy[NP];                 /* lane events the runner has reduced (its count, release) */
byte publishedBy[NP];                /* lane events the producer has published (its own count) */

#define laneCount() (reading[0] + reading[1])
#define LANE_RUNNABLE(i) (reading[i] && (len(lane[i]) > 0 || busy[i]))
#define RUNNABLE (len(queue) > 0 || (graceDone && sched != FINISHED) || LANE_RUNNABLE(0) || LANE_RUNNABLE(1))

/* apply producer p's oldest buffered store */
inline applyOne(p) {
    sb[p] ? what, val;
    if
    :: what == ST_BUSY -> busy[p] = val
    :: what == ST_PUB -> lane[p] ! val
    fi;
    what = 0; val = 0
}

/* a locked instruction of producer i: its buffer drains first */
inline drainOwn() {
    do
    :: len(sb[i]) > 0 -> applyOne(i)
    :: else -> break
    od
}

/* membarrier: every producer's buffer drains */
inline membarrier() {
    d_step {
        j = 0;
        do
        :: j < NP ->
            do
            :: len(sb[j]) > 0 -> applyOne(j)
            :: else -> break
            od;
            j++
        :: else -> j = 0; break
        od
    }
}

/* a plain store of producer i: into its buffer (a full buffer first lets
 * its oldest store reach memory, as a stalled store buffer does) */
inline bufferStore(w, v) {
    if
    :: d_step { len(sb[i]) == 3 -> applyOne(i) }
    :: else
    fi;
    sb[i] ! w, v
}

inline wakeFrom() {     /* wake() by producer i: load, then CAS (locked: drains first) */
    if
    :: sched == IDLE ->
        d_step {
            drainOwn();
            if
            :: sched == IDLE -> sched = SCHEDULED; ready ! 0
            :: else
            fi
        }
    :: else
    fi
}

inline wakeRunner() {
    if
    :: sched == IDLE ->
        d_step { if :: sched == IDLE -> sched = SCHEDULED; ready ! 0 :: else fi }
    :: else
    fi
}

inline sharedEmit(what2, ok) {
    inSection[i] = true;
    if
    :: closed -> inSection[i] = false; ok = false
    :: else ->
        d_step {
            drainOwn();             /* the enqueue is an exchange */
            queue ! i, what2;
            if :: what2 != OPEN -> accepted++ :: else fi;
            inSection[i] = false
        };
        ok = true
    fi
}

proctype Producer(byte i) {
    byte seq = 0, what, val;
    bool haveLane = false, hadLane = false, ok, sawIdle;
    do
    :: d_step { len(sb[i]) > 0 -> applyOne(i) }     /* the store buffer drains on its own, any time */
    :: seq < K && haveLane ->
        bufferStore(ST_BUSY, 1);                      /* store BUSY (buffered) */
#ifdef PRODUCER_FENCE
        d_step { drainOwn() };                        /* the producer's own full fence */
#endif
        if
        :: closed -> bufferStore(ST_BUSY, 0); break   /* .stopped */
        :: else
        fi;
        bufferStore(ST_PUB, seq);                     /* slot + count store (buffered) */
        d_step { accepted++; publishedBy[i]++ };
        bufferStore(ST_BUSY, 0);                      /* end of the emit (buffered) */
        sawIdle = (sched == IDLE);                    /* may pass the stores above */
        if
        :: sawIdle -> sawIdle = false; wakeFrom()
        :: else
        fi;
        seq++
    /* let the lane go (table slot wanted, or the loop idles too often),
     * only once drained: the runner's count (acquire) */
#ifdef BROKEN_LETGO_UNDRAINED
    :: seq < K && haveLane ->
#else
    :: seq < K && haveLane && consumedBy[i] == publishedBy[i] ->
#endif
        d_step { drainOwn(); exited[i] = true; haveLane = false }   /* fetch_or(EXITED) */
    :: seq < K && !haveLane ->
        sharedEmit(seq, ok);
        if
        :: !ok -> break
        :: else
        fi;
        wakeFrom();
        seq++
    :: seq < K && !haveLane && !hadLane ->
        /* open the lane (the code: after a streak of shared-queue emits) */
        sharedEmit(OPEN, ok);
        if
        :: ok -> haveLane = true; hadLane = true; wakeFrom()
        :: else -> break
        fi
    :: seq == K -> break
    od;
    /* thread exit: the lane is let go (fetch_or: drains the buffer first) */
    skip;   /* (a break may not jump straight into a d_step) */
    d_step {
        drainOwn();
        if :: haveLane -> exited[i] = true :: else fi
    }
}

proctype Grace() {
    byte i = 0;
    do
    :: i < NP -> !inSection[i]; i++
    :: else -> break
    od;
    graceDone = true;
    wakeRunner()
}

proctype Stop() {
    atomic { closed = true; run Grace() }
}

inline takeOne(took) {
    took = false;
    if
    :: atomic { len(queue) > 0 ->
           queue ? p, s;
           if
           :: s == OPEN -> reading[p] = true
           :: else -> assert(s == nextSeq[p]); nextSeq[p]++; reduced++
           fi;
           took = true; p = 0; s = 0 }
    :: atomic { reading[0] && len(lane[0]) > 0 ->
           assert(freed[0] == 0);
           lane[0] ? s; assert(s == nextSeq[0]); nextSeq[0]++; reduced++; consumedBy[0]++; took = true; s = 0 }
    :: atomic { NP > 1 && reading[1] && len(lane[1]) > 0 ->
           assert(freed[1] == 0);
           lane[1] ? s; assert(s == nextSeq[1]); nextSeq[1]++; reduced++; consumedBy[1]++; took = true; s = 0 }
    :: else
    fi
}

/* spindle_lane_set_looks_runnable, after the caller's membarrier (j is 0
 * on entry; a true r reads nothing, as the code's `&&` does): lane by lane
 * until one shows work, BUSY, then the
 * published count, each a load of its own (a producer moves between them;
 * the runner's own reads and the arithmetic are folded into those two
 * steps). BROKEN_COUNT_FIRST reads them the other way round. */
inline lanesRunnable(r) {
    do
    :: d_step { !r && j < NP && !reading[j] -> j++ }
#ifdef BROKEN_COUNT_FIRST
    :: atomic { !r && j < NP && reading[j] -> n = len(lane[j]) };
       d_step { r = (n > 0 || busy[j]); n = 0; j++ }
#else
    :: atomic { !r && j < NP && reading[j] -> b = busy[j] };
       d_step { r = (b || len(lane[j]) > 0); b = false; j++ }
#endif
    :: d_step { r || j >= NP -> j = 0 }; break
    od
}

inline loadRunnable(r) {
#if !defined(BROKEN_NO_MEMBARRIER) && !defined(PRODUCER_FENCE)
    if :: laneCount() > 0 -> membarrier() :: else fi;
#endif
    r = (len(queue) > 0);
    r = (r || graceDone);
    lanesRunnable(r)
}


proctype Runner() {
    byte p, s, j, what, val, n;
    bool r = false, took = false, b = false;
end:
    do
    :: ready ? _ ->
        d_step { assert(sched == SCHEDULED); sched = RUNNING };
        takeOne(took);
        if
        :: graceDone ->
            /* the stop's last slice (the code's order: the slice drains
             * the shared queue, whose markers name every lane, since no
             * marker can come after the grace period, then the lanes; then
             * the emptiness check, membarrier and each lane's BUSY and
             * count (lanesRunnable): work left is another slice, none
             * finishes the loop) */
            atomic {
                do
                :: len(queue) > 0 ->
                    queue ? p, s;
                    if
                    :: s == OPEN -> reading[p] = true
                    :: else -> assert(s == nextSeq[p]); nextSeq[p]++; reduced++
                    fi;
                    p = 0; s = 0
                :: else -> break
                od
            };
            atomic {
                do
                :: reading[0] && len(lane[0]) > 0 ->
                    lane[0] ? s; assert(s == nextSeq[0]); nextSeq[0]++; reduced++; consumedBy[0]++; s = 0
                :: NP > 1 && reading[1] && len(lane[1]) > 0 ->
                    lane[1] ? s; assert(s == nextSeq[1]); nextSeq[1]++; reduced++; consumedBy[1]++; s = 0
                :: !(reading[0] && len(lane[0]) > 0) && !(NP > 1 && reading[1] && len(lane[1]) > 0) -> break
                od
            };
#if !defined(BROKEN_NO_MEMBARRIER) && !defined(PRODUCER_FENCE)
            membarrier();
#endif
            r = (len(queue) > 0);
            lanesRunnable(r);
            if
            :: r -> d_step { sched = SCHEDULED; r = false; took = false; ready ! 0 }
            :: else -> d_step { sched = FINISHED; took = false }
            fi
        :: else ->
            /* reclaim: free drained EXITED lanes */
            d_step {
                j = 0;
                do
                :: j < NP ->
                    if
                    :: reading[j] && exited[j] && !busy[j] && len(lane[j]) == 0 ->
                        assert(freed[j] == 0); freed[j]++; reading[j] = false
                    :: else
                    fi;
                    j++
                :: else -> j = 0; break
                od
            };
            loadRunnable(r);
            if
            :: took && r -> d_step { sched = SCHEDULED; r = false; took = false; ready ! 0 }
            :: else ->
                d_step { sched = IDLE; r = false; took = false };
                loadRunnable(r);
                if
                :: r -> r = false; wakeRunner()
                :: else
                fi
            fi
        fi
    od
}

proctype Check() {
    bool lost_wakeup, lost_event, stop_hangs;
    timeout ->
    d_step {
        lost_wakeup = (RUNNABLE && sched == IDLE);
        lost_event = (len(queue) != 0 || accepted != reduced
                      || (reading[0] && len(lane[0]) != 0) || (reading[1] && len(lane[1]) != 0)
                      || len(sb[0]) != 0 || len(sb[1]) != 0);
        stop_hangs = (closed && sched != FINISHED)
    };
    assert(!lost_wakeup);
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
        run Runner();
#if STOP
        if
        :: run Stop()
        :: skip
        fi;
#endif
        run Check()
    }
}
