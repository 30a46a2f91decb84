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
 * searching`), wake a sleeper. Loops 1 and 2 only, in both orders
 * (three loops with a switch-out are 340 M states). (The code may also see an old beat when
 * a searcher is not switched out; that only adds wakes, which the parker
 * takes from anyone at any time.)
 * -DSTALL -DBROKEN_NO_RESCUE: without the rescue: SPIN must find the
 * deadlock.
 *
 * The sleepers (PoolCore.sleep, wakeOne, SleeperSet): each thread sleeps
 * on a parker of its own, with a slot beside it, and has a bit in the
 * sleeper set. To sleep, it lists itself (sets its bit: an RMW), prepares
 * its parker, then re-checks its slot, the queue and the exit, and sleeps
 * until its parker is notified. A wake claims one listed thread (clears
 * its bit: a compare-and-exchange, one step; the model picks any listed
 * thread), then, in steps of their own, fills its slot and notifies its
 * parker. A thread that wakes with its slot full knows a wake claimed it.
 * With its slot empty it clears its own bit (an RMW that returns the old
 * word): if the bit was set, it took itself off; if not, a wake claimed it
 * and is filling its slot, and the thread waits until the slot is full
 * before anything else. A notify may reach a thread after it listed
 * itself again (a wake for an earlier sleep): a spurious wake, which the
 * model allows.
 *
 * The handoff (PoolCore.schedule): a schedule that sees a sleeper and no
 * searcher (two loads, a guess) takes a sleeper off the list and leaves
 * the loop in its slot instead of pushing it; with nobody listed by then
 * it pushes and wakes as before. Other wakes (the pop rule's, the
 * rescue's, the exit's) fill the slot with LOOK: look at the queue. A
 * thread empties its slot when it looks for work, before the ready queue,
 * and runs a loop it finds there. Asserted: a wake fills only an empty
 * slot, and a thread with a full slot is not listed (so a slot is filled
 * at most once per listing, and no loop left in it is overwritten).
 *
 * -DBROKEN_NO_FLAG: the sleeper does not re-check its slot: a wake that
 * takes it off the list and notifies before it prepared its parker is
 * lost, and the thread sleeps unlisted, never to be woken. SPIN must find
 * the deadlock.
 * -DBROKEN_NO_CLAIM_WAIT: a thread that finds itself claimed with its
 * slot still empty does not wait for the slot: it may list itself again
 * before the claim's store lands, which then fills the slot of a listed
 * thread (or one a second wake fills too). SPIN must find the assertion
 * violated.
 *
 * The parker's own argument (a waiter reads wake_seq before it registers)
 * is parker.pml's: here each parker has one waiter, whose flag covers it.
 *
 * -DBROKEN_NO_POP_RULE: without the pop rule. SPIN must find the deadlock.
 * -DBROKEN_EARLY_POP: the pop after an early count not treated as one after
 * a wait. SPIN must find the deadlock too.
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

/* Each thread's parker (spindle_parker), which only that thread waits on:
 * registered from its prepare to its wake or cancel; a notify that finds it
 * registered ends the registration and wakes it; a notify that finds it
 * unregistered does nothing (the thread may not have prepared yet: its
 * flag re-check covers that). The parker's rounds and wake sequence are
 * parker.pml's question; with one waiter they come to these two bits.
 * Index 0 unused. */
bool registered[THREADS + 1];
bool woken[THREADS + 1];

/* The sleeper set (PoolCore.sleeperSet): `listed` its bits, `sleepers`
 * their count (the code reads the words themselves). */
byte sleepers = 0;
bool listed[THREADS + 1];
byte slot[THREADS + 1];          /* 0, LOOK, or a loop handed over + 1 */
#define LOOK 4

/* notify thread t's parker, after the caller's seq_cst write or fence */
inline notify(t) {
    atomic {
        if
        :: registered[t] -> registered[t] = false; woken[t] = true
        :: else -> skip
        fi
    }
}

/* wakeOne: claim a listed thread (clear its bit: one step; the code
 * claims the one listed last if it still is, the model the first it
 * finds, which with two threads is either), then fill its slot with
 * `payload`, then notify its parker; `got`: whether a thread was listed.
 * Locals are zeroed after use, so that they tell no states apart. */
inline wake_one(payload, got) {
    byte pick;
    byte w;
    atomic {
        for (w : 1 .. THREADS) {
            if
            :: listed[w] && pick == 0 -> pick = w
            :: else -> skip
            fi
        }
        w = 0;
        if
        :: pick != 0 -> listed[pick] = false; sleepers--
        :: else -> skip
        fi
    }
    if
    :: pick != 0 ->
        /* the slot of the thread claimed: empty, and the thread not listed
         * again (it waits for this store before it lists itself) */
        atomic { assert(slot[pick] == 0 && !listed[pick]); slot[pick] = payload };
        got = true;
        notify(pick);
        pick = 0
    :: else -> got = false
    fi
}

/* wakeAll (the exit): every listed thread claimed (the words exchanged
 * with zero: one step), then each one's slot filled with LOOK and its
 * parker notified */
inline wake_all() {
    byte v;
    bool take[THREADS + 1];
    atomic {
        for (v : 1 .. THREADS) {
            if
            :: listed[v] -> listed[v] = false; sleepers--; take[v] = true
            :: else -> skip
            fi
        }
        v = 0
    }
    for (v : 1 .. THREADS) {
        if
        :: take[v] ->
            atomic { assert(slot[v] == 0 && !listed[v]); slot[v] = LOOK };
            notify(v);
            take[v] = false
        :: else -> skip
        fi
    }
    v = 0
}

/* schedule's wake, and the pop rule's: only when someone sleeps and nobody
 * searches (two loads) */
inline wake_if_nobody_searches() {
    if
    :: sleepers > 0 ->
        if
        :: searching == 0 -> wake_one(LOOK, woke); woke = false
        :: else -> skip
        fi
    :: else -> skip
    fi
}

inline schedule(loop) {
    /* the handoff: a guess from two loads, then a sleeper taken off the
     * list with the loop in its slot */
    if
    :: sleepers > 0 ->
        if
        :: searching == 0 -> wake_one(loop + 1, handed)
        :: searching != 0 -> skip
        fi
    :: sleepers == 0 -> skip
    fi;
    if
    :: handed -> handed = false
    :: !handed ->
        ready!loop;                  /* push (a full barrier) ... */
        wake_if_nobody_searches()    /* ... then maybe wake */
    fi
}

proctype Producer() {
    bool handed = false;
    bool woke = false;
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
    wake_all()
}

proctype Thread(byte me) {
    byte loop;
    bool waited = false;        /* this pop follows a wait for work */
    bool counted = false;       /* counted in searching since its last slice */
    bool got = false;           /* found a loop: in its slot or the queue */
    bool woke = false;
    byte handed;
    bool claimed = false;
top:
    /* its slot first (takeHandedTask: an exchange), then the queue */
    atomic { handed = slot[me]; slot[me] = 0 };
    if
    :: handed != 0 && handed != LOOK -> loop = handed - 1; got = true
    :: else -> skip
    fi;
    handed = 0;
    if
    :: got -> skip
    :: else ->
        if
        :: atomic { nempty(ready) -> ready?loop } -> got = true
        :: empty(ready) -> skip
        fi
    fi;
    if
    :: got ->
        got = false;
        /* a thread counted as searching since its last slice stops counting */
        if
        :: counted -> searching--; counted = false
        :: else -> skip
        fi;
#ifndef BROKEN_NO_POP_RULE
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
    :: else ->
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
            (sleepers == 0 || (ran[0] && ran[1] && ran[2]) || exiting);
            stalled--
        :: true -> skip
        fi;
#endif
        do
        :: nempty(ready) || exiting -> searching--; goto top
        :: else -> break        /* the spin budget ran out */
        od;
        searching--;
        /* sleep: list itself (set its bit), prepare its parker, re-check,
         * sleep until notified; its slot is empty */
        atomic { assert(slot[me] == 0); listed[me] = true; sleepers++ };
        registered[me] = true;
        if
#ifndef BROKEN_NO_FLAG
        :: slot[me] != 0 || nempty(ready) || exiting ->
#else
        :: nempty(ready) || exiting ->
#endif
            /* cancel: unregister, or take the wake a notify just gave */
            atomic { registered[me] = false; woken[me] = false }
        :: else ->
            atomic { woken[me] -> woken[me] = false }
        fi;
        /* a full slot: a wake claimed it; an empty one: clear its own bit,
         * and if a wake had cleared it first, wait for that wake's store */
        if
        :: atomic { slot[me] != 0 -> assert(!listed[me]) }
        :: else ->
            atomic {
                if
                :: listed[me] -> listed[me] = false; sleepers--
                :: else -> claimed = true
                fi
            };
#ifndef BROKEN_NO_CLAIM_WAIT
            if
            :: claimed -> (slot[me] != 0)
            :: else -> skip
            fi;
#endif
            claimed = false
        fi;
        goto top
    fi;
done:
    skip
}

#if defined(STALL) && !defined(BROKEN_NO_RESCUE)
/* The rescue: an emit that finds its loop still queued, while a thread
 * sleeps and every searcher is switched out, wakes a sleeper. */
proctype Rescuer() {
    bool woke = false;
    do
    :: (ran[0] && ran[1] && ran[2]) -> break
    :: atomic {
           (nempty(ready) && sleepers > 0 && searching > 0 && searching == stalled) ->
           /* wake_one() in one step: its steps are the other runs' question */
           wake_one(LOOK, woke); woke = false
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
        for (i : 1 .. THREADS) { run Thread(i) }
    }
}
