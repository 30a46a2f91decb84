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
 * when a thread pops a loop right after waiting for work and sees more
 * loops queued, it wakes the sleepers unless someone searches (a fence,
 * then the same loads as schedule). A pop straight after a slice does not.
 *
 * The model: one producer schedules loops 0, 1 and 2, in every order;
 * loop 0's slice blocks until loop 1's has run, loop 2's is an ordinary
 * slice (so a thread may reach loop 0 straight from another slice);
 * THREADS pool threads (default 2); each shared access a step of its own
 * (all are seq_cst or fenced in the code, so interleaving is the memory
 * model). A searcher polls any number of times, then sleeps. Once every
 * loop ran, the producer shuts the pool down (exiting, notify) and every
 * thread exits.
 * A run in which the producer waits for ever is an invalid end state.
 *
 * A thread whose slice drained its loop counts itself as searching before
 * the loop's idle store, so the schedules that follow count on it instead
 * of waking a sleeper; its next pop counts as one after a wait (the pop
 * rule applies).
 *
 * -DSTALL: the rescue (PoolCore.loopIsWaiting). One searcher may be
 * switched out by the kernel as its search begins, still counted as
 * searching; it resumes only once no thread sleeps (none could be woken in
 * its place) or every loop ran. A schedule counting on it wakes nobody, so
 * a queued loop must be run by the sleeper: the Rescuer process stands for
 * the producer's later emits, which find the loop queued and, once the
 * searchers' beat is old (every searcher switched out: `stalled ==
 * searching`), wake the sleepers. Loops 1 and 2 only, in both orders
 * (three loops with a switch-out are 340 M states). (The code may also see an old beat when
 * a searcher is not switched out; that only adds wakes, which the parker
 * takes from anyone at any time.)
 * -DSTALL -DBROKEN_NO_RESCUE: without the rescue: SPIN must find the
 * deadlock.
 *
 * -DBROKEN_LATE_SEQ: the parker's waiter reads wake_seq after registering:
 * a notify can end its round and bump wake_seq
 * between the two, another thread take the loop that notify announced, and
 * the waiter sleep on the new value, unregistered, never to be woken. SPIN
 * must find the deadlock.
 *
 * -DBROKEN_NO_HANDOFF: without the pop rule.
 * -DBROKEN_EARLY_POP: the pop after an early count not treated as one after
 * a wait. SPIN must find the deadlock too.
 * SPIN must find the deadlock.
 */
#ifndef THREADS
#define THREADS 2
#endif

chan ready = [3] of { byte };   /* the ready queue (a push is an exchange) */
byte searching = 0;             /* threads spinning on the ready queue */
bool exiting = false;
bool ran[3];                    /* a loop's slice has run (loops 1, 2) or ended (loop 0) */
byte stalled = 0;               /* searchers switched out (-DSTALL) */
bool stall_used = false;        /* one switch-out per run */

/* The parker (spindle_parker): waiters registered in the current round;
 * a notify that finds waiters ends the round (one CAS) and bumps wake_seq;
 * a sleeper reads wake_seq, then registers, and sleeps until wake_seq moves
 * past the value it read. */
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

inline schedule(loop) {
    ready!loop;                  /* push (a full barrier) ... */
    wake_if_nobody_searches()    /* ... then maybe wake */
}

proctype Producer() {
#ifdef STALL
    /* loops 1 and 2, in both orders (loop 0, the blocking slice, is the
     * other runs' question: it is marked run) */
    ran[0] = true;
    if
    :: schedule(1); schedule(2)
    :: schedule(2); schedule(1)
    fi;
#else
    /* every order of the three loops */
    if
    :: schedule(0); schedule(1); schedule(2)
    :: schedule(0); schedule(2); schedule(1)
    :: schedule(1); schedule(0); schedule(2)
    :: schedule(1); schedule(2); schedule(0)
    :: schedule(2); schedule(0); schedule(1)
    :: schedule(2); schedule(1); schedule(0)
    fi;
#endif
    /* shutdown once every loop ran (releaseThreads) */
    (ran[0] && ran[1] && ran[2]);
    exiting = true;
    notify()
}

proctype Thread() {
    byte loop;
    byte my_round, key;
    bool waited = false;        /* this pop follows a wait for work */
    bool counted = false;       /* counted in searching since its last slice */
top:
    if
    :: atomic { nempty(ready) -> ready?loop } ->
        /* a thread counted as searching since its last slice stops counting */
        if
        :: counted -> searching--; counted = false
        :: else -> skip
        fi;
#ifndef BROKEN_NO_HANDOFF
        /* the pop rule, after a wait for work only (a search begun at the
         * end of the last slice is one): more loops queued? make sure
         * someone looks */
        if
        :: waited && nempty(ready) -> wake_if_nobody_searches()
        :: else -> skip
        fi;
#endif
        waited = false;
        /* the slice */
        if
        :: loop == 1 -> ran[1] = true
        :: loop == 2 -> ran[2] = true           /* another loop's slice */
        :: loop == 0 -> ran[1]; ran[0] = true   /* blocks until loop 1 ran */
        fi;
        /* a slice that drains its loop counts the thread as searching
         * before the loop's idle store (beforeIdle): a schedule made from
         * then on counts on this thread, which looks at the queue next.
         * Loop 0's slice ends in the model only once every loop ran. */
        if
#ifndef BROKEN_EARLY_POP
        :: loop != 0 -> searching++; counted = true; waited = true
#else
        :: loop != 0 -> searching++; counted = true
#endif
        :: true -> skip
        fi;
        goto top
    :: empty(ready) ->
        if
        :: exiting ->
            if
            :: counted -> searching--; counted = false
            :: else -> skip
            fi;
            goto done
        :: else -> skip
        fi;
        /* waitForWork: search (counted already, or now), then sleep */
        if
        :: counted -> counted = false
        :: else -> searching++
        fi;
        waited = true;
#ifdef STALL
        /* switched out as the search begins (the beat just written) */
        if
        :: !stall_used ->
            stall_used = true;
            stalled++;
            (waiters == 0 || (ran[0] && ran[1] && ran[2]) || exiting);
            stalled--
        :: true -> skip
        fi;
#endif
        do
        :: nempty(ready) || exiting -> searching--; goto top
        :: else -> break        /* the spin budget ran out */
        od;
        searching--;
        /* parker: read wake_seq, register, re-check, sleep until
         * wake_seq moves (spindle_parker_prepare: two steps) */
#ifndef BROKEN_LATE_SEQ
        key = wake_seq;
        atomic { waiters++; my_round = parker_round };
#else
        atomic { waiters++; my_round = parker_round };
        key = wake_seq;
#endif
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

#if defined(STALL) && !defined(BROKEN_NO_RESCUE)
/* The rescue: an emit that finds its loop still queued, while a thread
 * sleeps and every searcher is switched out, wakes the sleepers. */
proctype Rescuer() {
    do
    :: (ran[0] && ran[1] && ran[2]) -> break
    :: atomic {
           (nempty(ready) && waiters > 0 && searching > 0 && searching == stalled) ->
           /* notify() in one step: its two steps are the other runs' question */
           waiters = 0; parker_round++; wake_seq++
       }
    od
}
#endif

init {
    byte i;
    atomic {
#if defined(STALL) && !defined(BROKEN_NO_RESCUE)
        run Rescuer();
#endif
        run Producer();
        for (i : 1 .. THREADS) { run Thread() }
    }
}
