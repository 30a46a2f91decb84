/*
 * The pool's thread wake-up protocol (PoolCore: schedule, runThread,
 * waitForWork, and the parker they sleep on), as a Promela model for SPIN.
 * PROTOCOL.md ("Pool threads: who wakes whom") states it in words;
 * scripts/model-check.sh checks it.
 *
 * The question: is a loop on the ready queue always run while a pool
 * thread could run it? A schedule wakes no sleeper while a thread searches
 * (spins on the ready queue), counting on the searcher to find the loop.
 * But a searcher takes one loop; if a second loop was pushed during the
 * search and the first loop's slice does not end (it blocks until the
 * second has run: a feedback that waits for another loop), the second
 * must still be run, by the pool's other thread. The pop rule does it:
 * after a pop, a thread that sees more loops queued wakes the sleepers
 * unless someone searches (a fence, then the same loads as schedule).
 *
 * The model: one producer schedules loop 0 and loop 1, in either order;
 * loop 0's slice blocks until loop 1's has run; THREADS pool threads
 * (default 2); each shared access a step of its own (all are seq_cst or
 * fenced in the code, so interleaving is the memory model). A searcher
 * polls any number of times, then sleeps. Once both loops ran, the
 * producer shuts the pool down (exiting, notify) and every thread exits.
 * A run in which the producer waits for ever is an invalid end state.
 *
 * -DBROKEN_NO_HANDOFF: without the pop rule (the code before the fix).
 * SPIN must find the deadlock.
 */
#ifndef THREADS
#define THREADS 2
#endif

chan ready = [2] of { byte };   /* the ready queue (a push is an exchange) */
byte searching = 0;             /* threads spinning on the ready queue */
bool exiting = false;
bool ran[2];                    /* a loop's slice has run (loop 1) or ended (loop 0) */

/* The parker (spindle_parker): waiters registered in the current round;
 * a notify that finds waiters ends the round (one CAS) and bumps wake_seq;
 * a sleeper sleeps until wake_seq moves past the value it read. */
byte waiters = 0;
byte parker_round = 0;
byte wake_seq = 0;

/* notify after the caller's seq_cst write or fence */
inline notify() {
    bool ended = false;
    atomic {
        if
        :: waiters > 0 -> waiters = 0; parker_round++; ended = true
        :: else -> skip
        fi
    }
    if
    :: ended -> wake_seq++
    :: else -> skip
    fi
}

/* schedule's wake, and the pop rule's: only when someone sleeps and nobody
 * searches (two loads) */
inline wake_if_nobody_searches() {
    if
    :: waiters > 0 ->
        if
        :: searching == 0 -> notify()
        :: else -> skip
        fi
    :: else -> skip
    fi
}

proctype Producer() {
    byte first, second;
    if
    :: first = 0; second = 1
    :: first = 1; second = 0
    fi;
    ready!first;                 /* schedule: push (a full barrier) ... */
    wake_if_nobody_searches();   /* ... then maybe wake */
    ready!second;
    wake_if_nobody_searches();
    /* shutdown once both loops ran (releaseThreads) */
    (ran[0] && ran[1]);
    exiting = true;
    notify()
}

proctype Thread() {
    byte loop;
    byte my_round, key;
top:
    if
    :: atomic { nempty(ready) -> ready?loop } ->
#ifndef BROKEN_NO_HANDOFF
        /* the pop rule: more loops queued? make sure someone looks */
        if
        :: nempty(ready) -> wake_if_nobody_searches()
        :: else -> skip
        fi;
#endif
        /* the slice */
        if
        :: loop == 1 -> ran[1] = true
        :: loop == 0 -> ran[1]; ran[0] = true   /* blocks until loop 1 ran */
        fi;
        goto top
    :: empty(ready) ->
        if
        :: exiting -> goto done
        :: else -> skip
        fi;
        /* waitForWork: search, then sleep */
        searching++;
        do
        :: nempty(ready) || exiting -> searching--; goto top
        :: else -> break        /* the spin budget ran out */
        od;
        searching--;
        /* parker: register, re-check, sleep until notified */
        atomic { waiters++; my_round = parker_round; key = wake_seq };
        if
        :: nempty(ready) || exiting ->
            atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi }
        :: else ->
            (wake_seq != key);
            atomic { if :: my_round == parker_round -> waiters-- :: else -> skip fi }
        fi;
        goto top
    fi;
done:
    skip
}

init {
    byte i;
    atomic {
        run Producer();
        for (i : 1 .. THREADS) { run Thread() }
    }
}
