/*
 * The bounded queue's admission (issue 51; Sources/Spindle/Queues/
 * BoundedAdmission.swift, LANES.md "Bounded lanes") as a Promela model for
 * SPIN. scripts/model-check.sh runs it.
 *
 * A bounded loop's events wait where the default queue's do: a producer
 * that streams has a lane with a budget of its own (B events the runner
 * has not taken), the others share the shared queue's share (S slots). The
 * model: one lane producer (LN events), one shared producer (SN events),
 * both under `.block`, and the runner, which takes the shared queue's
 * events one at a time (freeing each slot with a store of `released`
 * before it reduces the event) and a lane's waiting events as one run
 * (`consumed` stored after the run), then notifies the space parker (a
 * fenced notify: the stores, then the fence, then the load of the
 * waiters). The loop's scheduling is not modelled here (loop-scheduling.pml
 * and lanes.pml check it): the runner takes whatever is queued, and blocks
 * while nothing is.
 *
 * The lane producer keeps a cached limit (`consumed + B` when it last read
 * `consumed`) and re-reads `consumed` only when it reaches it
 * (spindle_lane_slot, spindle_lane_has_room); full as of that read, it
 * waits on the parker: it reads the parker's sequence, registers, re-checks
 * the room (re-reading `consumed`), and sleeps until the sequence moves
 * unless there is room. The shared producer claims a slot (a CAS of
 * `claimed`, against `released`) and waits the same way when none is free.
 *
 * Checked: never more than B + S events wait (`waiting`, the events
 * accepted and not yet taken by the runner), every event is reduced
 * exactly once and each producer's in order, and no producer sleeps for
 * ever (an invalid end state: every process blocked before its end).
 *
 * -DBROKEN_FALLBACK: a lane emit whose slot call found the lane full, but
 * whose second look finds room (the runner took some events in between),
 * treats the missing slot as an exhausted allocator and sends the event
 * through the shared queue, while older events of its own still wait in
 * the lane: SPIN must find the reorder. (The engine had this bug until the
 * stress suite caught it; spindle_lane_was_full is the cure.)
 * -DBROKEN_NO_RECHECK: the waiting producer does not re-check the room
 * after registering: SPIN must find the lost wake-up.
 */
#ifndef B
#define B 2
#endif
#ifndef S
#define S 1
#endif
#ifndef LN
#define LN 4
#endif
#ifndef SN
#define SN 2
#endif
#define LANE 0
#define SHARED 1

/* The lane: sequence numbers of its published events, by position. */
byte lane_seq[LN];
byte published = 0;
byte consumed = 0;
/* The shared queue (FIFO): producer and sequence number. */
chan shared = [S + 1] of { byte, byte };
byte claimed = 0;
byte released = 0;
/* The space parker (as parker.pml). */
byte waiters = 0;
byte parker_round = 0;
byte wake_seq = 0;
/* Checks. */
byte waiting = 0;
byte next_seq[2];
byte reduced = 0;

inline notify() {
    bool ended;
    atomic {
        if
        :: waiters > 0 -> waiters = 0; parker_round++; ended = true
        :: else -> skip
        fi
    }
    if
    :: ended -> wake_seq++; ended = false
    :: else -> skip
    fi
}

inline reduce(p, s) {
    assert(s == next_seq[p]);
    next_seq[p]++;
    reduced++
}

/* Waits on the parker until `room` holds, re-checking after registering. */
#ifndef BROKEN_NO_RECHECK
#define RECHECK(room) :: room -> atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi }
#else
#define RECHECK(room)
#endif
#define WAIT_FOR(room) \
    key = wake_seq; \
    atomic { waiters++; my_round = parker_round }; \
    if \
    RECHECK(room) \
    :: else -> \
        (wake_seq != key); \
        atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi } \
    fi

proctype LaneProducer() {
    byte i = 0, limit = B, seen, key, my_round;
    do
    :: i == LN -> break
    :: i < LN && published < limit ->
        /* The fast path: the slot, then the publish. */
        atomic { lane_seq[published] = i; published++; waiting++; assert(waiting <= B + S) };
        i++
    :: i < LN && published >= limit ->
        /* The slot call re-reads the runner's count. */
        seen = consumed;
        limit = seen + B;
        if
        :: published < limit -> skip  /* room now: the next round takes it */
        :: else ->
            /* Full as of that read (spindle_lane_was_full). */
#ifdef BROKEN_FALLBACK
            if
            :: consumed + B > published ->
                /* Room on a second look: taken for an exhausted
                 * allocator, the event goes through the shared queue. */
                do
                :: atomic { claimed - released < S -> claimed++ }; break
                :: else -> WAIT_FOR(claimed - released < S)
                od;
                atomic { shared!LANE,i; waiting++; assert(waiting <= B + S) };
                i++
            :: else -> WAIT_FOR(consumed + B > published)
            fi
#else
            WAIT_FOR(consumed + B > published)
#endif
        fi
    od
}

proctype SharedProducer() {
    byte i = 0, key, my_round;
    do
    :: i == SN -> break
    :: i < SN ->
        if
        :: atomic { claimed - released < S -> claimed++ } ->
            atomic { shared!SHARED,i; waiting++; assert(waiting <= B + S) };
            i++
        :: else -> WAIT_FOR(claimed - released < S)
        fi
    od
}

proctype Runner() {
    byte p, s, taken, k;
    do
    :: reduced == LN + SN -> break
    :: atomic { nempty(shared) -> shared?p,s; waiting-- };
        /* The slot is freed before the event is reduced. */
        released++;
        reduce(p, s);
        notify()
    :: atomic { published > consumed -> taken = published - consumed; waiting = waiting - taken };
        k = 0;
        do
        :: k < taken -> reduce(LANE, lane_seq[consumed + k]); k++
        :: else -> break
        od;
        consumed = consumed + taken;
        notify()
    od
}

init {
    atomic {
        run LaneProducer();
        run SharedProducer();
        run Runner()
    }
}
