/*
 * The parker (CSupport/spindle_parker.c) on its own, as a Promela model
 * for SPIN: an event count on which several threads wait for one shared
 * condition that each of them may consume, as producers wait for space in
 * a full bounded queue (BoundedAdmission's space parker). pool-wake.pml covered this while
 * the pool's threads shared one parker; since each sleeps on its own, with
 * a flag that only it consumes, this model keeps the parker's own argument
 * checked. scripts/model-check.sh runs it.
 *
 * The model: WAITERS threads each take one token; a producer adds TOKENS
 * (= WAITERS) tokens one at a time, notifying after each. A waiter takes a
 * token if there is one (one atomic step, a CAS in the code), else
 * prepares (reads wake_seq, then registers: two steps), re-checks the
 * tokens, and sleeps until wake_seq moves; a waiter that wakes or cancels
 * unregisters itself if its round is still current. A notify that finds
 * waiters ends the round (unregistering all of them) and bumps wake_seq.
 * Every waiter must get its token: a run in which one sleeps for ever is an
 * invalid end state.
 *
 * -DBROKEN_LATE_SEQ: the waiter reads wake_seq after registering: a notify
 * can end its round and bump wake_seq between the two, another waiter take
 * the token that notify announced, and this one sleep on the new value,
 * unregistered, never to be woken. SPIN must find the deadlock.
 * -DBROKEN_NO_RECHECK: no re-check after registering: SPIN must find the
 * lost wake-up.
 */
#ifndef WAITERS
#define WAITERS 3
#endif

byte tokens = 0;
byte waiters = 0;
byte parker_round = 0;
byte wake_seq = 0;

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

proctype Producer() {
    byte i;
    for (i : 1 .. WAITERS) {
        tokens++;        /* the condition (a seq_cst write) ... */
        notify()         /* ... then the fence and the registry's load */
    }
}

proctype Waiter() {
    byte key, my_round;
    bool took = false;
    do
    :: took -> break
    :: else ->
        atomic { if :: tokens > 0 -> tokens--; took = true :: else -> skip fi };
        if
        :: took -> break
        :: else -> skip
        fi;
#ifndef BROKEN_LATE_SEQ
        key = wake_seq;
        atomic { waiters++; my_round = parker_round };
#else
        atomic { waiters++; my_round = parker_round };
        key = wake_seq;
#endif
        if
#ifndef BROKEN_NO_RECHECK
        :: tokens > 0 ->
            atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi }
#endif
        :: else ->
            (wake_seq != key);
            atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi }
        fi;
        key = 0; my_round = 0
    od
}

init {
    byte i;
    atomic {
        run Producer();
        for (i : 1 .. WAITERS) { run Waiter() }
    }
}
