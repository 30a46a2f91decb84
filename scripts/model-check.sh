#!/usr/bin/env bash
# Model-checks the loop scheduling protocol
# (Sources/Spindle/Runtime/Scheduling/Model/PROTOCOL.md) with SPIN: its
# Promela model, loop-scheduling.pml, beside it; the pool's thread
# wake-up protocol, pool-wake.pml (the runs named pool-*); the bounded
# queue's admission, bounded.pml (bounded*); and the parker
# its threads sleep on, parker.pml (the runs named parker*).
#
# 1. The protocol as written, exhaustively (2 producers x 2 events, 2 pool
#    runners, 1 event per slice, a stop racing the emits, a subscriber):
#    assertions and invalid end states, stop mode drain and stop mode
#    discard; the LTL formula no_lost_wakeup. About 13-15 M states, 30-50 s
#    and 1.1-1.3 GB each.
# 2. No cycle in the state graph (every run ends: no livelock), on smaller
#    configurations.
# 3. The broken variants: each must make SPIN report the error it was built
#    to cause, or this script fails ("the model can fail").
# 4. The lanes (lanes.pml): safety with membarrier and without it
#    (producers that fence: the portable path), the broken variants, and
#    cycles under weak fairness.
# 4b. The bounded queue's admission (bounded.pml): a lane producer with a
#    budget and a shared-queue producer under `.block`: the bound, order,
#    no lost wake-up, no cycle; and its broken variants.
# 5. The inline fast path (loop-scheduling.pml -DINLINE): an emit on the
#    loop's own context runs the scheduling its CAS won; safety, LTL, no
#    cycle, and its broken variant. The direct path (-DDIRECT): such an
#    emit that finds the queue empty takes the idle loop and keeps its
#    event in the runner's own queue; safety, LTL, no cycle, and its broken
#    variant.
# 6. The reduction gate (loop-scheduling.pml -DGATE, stream(from:)'s
#    demand): a granter opens the gate one unit of demand at a time, a slice
#    reduces one event through the open gate (or after a stop); safety (the
#    loop never ahead of the demand) at 1 producer x 2 events and at 2 x 1,
#    LTL, no cycle, and the broken variant whose idle re-check misses a
#    grant. The same runs in both scopes.
# Two scopes:
# - default (the README's test command): every run but the five that take
#   minutes or gigabytes; the lanes' safety is checked at 2 producers x 1
#   event (with membarrier and with producers that fence), and so are the
#   protocol's drain, discard and LTL runs and the inline and direct
#   paths' (the same properties on a smaller state space). About three
#   minutes on two cores, under 2 GB.
# - --full (CI): those five too: the lanes' safety at 2 x 2 (6-10 minutes,
#   15 GB; the others run beside it), the cycle checks of the pool's
#   wake-up (2-3 minutes each), then the lanes' cycle checks alone (3-5
#   minutes, 4.5 GB): about fifteen minutes in all.
# Runs go two at a time on two cores.
#
# Fails (non-zero) if a correct variant has any error or an incomplete
# search, or a broken variant has none. Installs spin (Debian/Ubuntu: the
# `spin` package) when missing.
#
#   scripts/model-check.sh [--full]
#   MODEL_CHECK_JOBS   runs at once (default: 2, or 1 on a single core)
#   MODEL_CHECK_KEEP   1: keep the work directory (pan sources, logs, trails)
set -euo pipefail
cd "$(dirname "$0")/.."
model="$PWD/Sources/Spindle/Runtime/Scheduling/Model/loop-scheduling.pml"
pool_model="$PWD/Sources/Spindle/Runtime/Scheduling/Model/pool-wake.pml"
parker_model="$PWD/Sources/Spindle/Runtime/Scheduling/Model/parker.pml"
lanes_model="$PWD/Sources/Spindle/Runtime/Scheduling/Model/lanes.pml"
bounded_model="$PWD/Sources/Spindle/Runtime/Scheduling/Model/bounded.pml"

missing=()
command -v spin >/dev/null 2>&1 || missing+=(spin)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "model-check needs ${missing[*]}: install them with your system's package manager." >&2
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "Installing ${missing[*]} ..." >&2
  $SUDO apt-get update -qq </dev/null
  # env, not a prefix assignment: sudo's env_reset would drop it.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null </dev/null
fi

scope_full=0
case "${1:-}" in
  --full) scope_full=1 ;;
  "") ;;
  *) echo "usage: scripts/model-check.sh [--full]" >&2; exit 2 ;;
esac

jobs="${MODEL_CHECK_JOBS:-}"
if [ -z "$jobs" ]; then
  jobs=$(nproc 2>/dev/null || echo 1)
  if [ "$jobs" -gt 2 ]; then jobs=2; fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/model-check.XXXXXX")
if [ "${MODEL_CHECK_KEEP:-0}" = 1 ]; then
  echo "work directory: $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# pan builds: safety (assertions, invalid end states), LTL (acceptance
# cycles of the formula's never claim), cycles (non-progress: any cycle).
# COLLAPSE: exhaustive, state vectors compressed (about a third).
cc_safety="-O2 -DSAFETY -DNOCLAIM -DCOLLAPSE"
cc_ltl="-O2 -DCOLLAPSE"
cc_cycles="-O2 -DNP -DNOCLAIM -DCOLLAPSE"

# run NAME "SPIN DEFINES" "CC FLAGS" "PAN ARGS": generate, compile, verify
# into $work/NAME (log in $work/NAME/log). Never fails itself: the verdict
# comes from the log.
run() {
  local name=$1 defs=$2 ccflags=$3 panargs=$4 dir="$work/$1"
  mkdir -p "$dir"
  case "$name" in
    pool-*) cp "$pool_model" "$dir/model.pml" ;;
    parker|parker-*) cp "$parker_model" "$dir/model.pml" ;;
    lanes|lanes-*) cp "$lanes_model" "$dir/model.pml" ;;
    bounded|bounded-*) cp "$bounded_model" "$dir/model.pml" ;;
    *) cp "$model" "$dir/model.pml" ;;
  esac
  (
    cd "$dir"
    echo "$defs" >defs
    # shellcheck disable=SC2086  # word splitting of the flag lists is intended
    spin -a $defs model.pml >spin.log 2>&1 || { echo "spin -a failed:"; cat spin.log; exit 1; }
    # shellcheck disable=SC2086
    gcc $ccflags -o pan pan.c >gcc.log 2>&1 || { echo "gcc failed:"; cat gcc.log; exit 1; }
    # shellcheck disable=SC2086
    ./pan $panargs </dev/null
  ) >"$dir/log" 2>&1 || true
}

# verdict NAME pass|PATTERN DESCRIPTION: prints one summary line; returns 1
# when the run did not do what it should (pass: no error, complete search;
# PATTERN: at least one error, matching PATTERN, an extended regex).
failed=0
verdict() {
  local name=$1 expect=$2 what=$3 log="$work/$1/log"
  local states errors secs
  states=$(awk '/states, stored/ { print $1; exit }' "$log")
  errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$log" | head -1)
  secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$log" | head -1)
  local summary="${states:-?} states stored, ${errors:-?} errors, ${secs:-?} s"
  local ok=0
  if [ "$expect" = pass ]; then
    if [ "${errors:-x}" = 0 ] && ! grep -Eq 'max search depth too small|Search not completed|out of memory|pan: error' "$log"; then
      ok=1
    fi
  else
    if [ "${errors:-0}" -gt 0 ] && grep -Eq "$expect" "$log"; then ok=1; fi
  fi
  if [ "$ok" = 1 ]; then
    if [ "$expect" = pass ]; then
      printf 'PASS  %-30s %s  (%s)\n' "$name" "$summary" "$what"
    else
      printf 'PASS  %-30s %s: %s  (%s)\n' "$name" "$summary" \
        "$(grep -Eo "$expect" "$log" | head -1)" "$what"
    fi
    return 0
  fi
  if [ "$expect" = pass ]; then
    printf 'FAIL  %-30s %s  (%s)\n' "$name" "$summary" "$what"
  else
    printf 'FAIL  %-30s %s: SPIN did not find /%s/: the model cannot fail this way  (%s)\n' \
      "$name" "$summary" "$expect" "$what"
  fi
  echo "---- $name: pan output"
  grep -v '^	' "$log" | head -40 || true
  if ls "$work/$name"/*.trail >/dev/null 2>&1; then
    echo "---- $name: counterexample (last steps)"
    # shellcheck disable=SC2046
    (cd "$work/$name" && spin -t -p $(cat defs) model.pml 2>&1 | tail -60) || true
  fi
  echo "----"
  failed=1
  return 0
}

echo "== SPIN: $(spin -V 2>&1 | head -1); scope: $([ "$scope_full" = 1 ] && echo full || echo "default (--full: the exhaustive runs too)"); models: ${model#"$PWD"/}, ${pool_model#"$PWD"/}, ${parker_model#"$PWD"/}, ${lanes_model#"$PWD"/}, ${bounded_model#"$PWD"/}; $jobs job(s)"

# Fields: name; spin defines; cc flags; pan arguments; "pass" or the
# expected error (an extended regex); what the run checks. The longest runs
# first: they start first in the pool.
full="2 producers x 2 events, 2 runners, budget 1, stop, subscriber"
checks=(
  # (lanes.pml's safety run, the longest, first; see section 5)
  "lanes;;$cc_safety;-m40000 -w26;pass;lanes: plain-store emits under TSO store buffers, membarrier on the runner's side: order across marker and lane, nothing lost, no lost wake-up, stop ends, each lane freed once"
  # 1. The protocol as written, exhaustive: assertions, invalid end states, the LTL formula.
  "ltl-no-lost-wakeup;;$cc_ltl;-a -N no_lost_wakeup -m10000 -w26;pass;LTL no_lost_wakeup: $full"
  "drain;;$cc_safety;-m10000 -w26;pass;stop mode drain: $full"
  "discard;-DDISCARD=1;$cc_safety;-m10000 -w26;pass;stop mode discard: $full"
  # 2. Every run ends (no cycle, so no livelock): on smaller configurations,
  #    the full one takes two minutes.
  "no-cycles;-DSUBSCRIBER=0;$cc_cycles;-l -m10000 -w24;pass;no cycle: 2 producers x 2 events, no subscriber"
  "no-cycles-subscriber;-DK=1;$cc_cycles;-l -m10000 -w24;pass;no cycle: 2 producers x 1 event, subscriber"
  # 3. Broken variants: SPIN must report the error each was built to cause.
  "broken-no-recheck;-DBROKEN_NO_RECHECK;$cc_safety;-m10000 -w24;assertion violated +!\\(lost_wakeup\\);no re-check after the IDLE store: lost wake-up"
  "broken-no-recheck-ltl;-DBROKEN_NO_RECHECK;$cc_ltl;-a -A -N no_lost_wakeup -m10000 -w24;acceptance cycle;no re-check: LTL no_lost_wakeup violated"
  "broken-double-push;-DBROKEN_DOUBLE_PUSH;$cc_safety;-m10000 -w24;assertion violated +\\((runners<=1|sched==1)\\);wake() without CAS: loop pushed twice"
  "broken-double-push-unchecked;-DBROKEN_DOUBLE_PUSH -DCAS_ASSERT=0;$cc_safety;-m10000 -w24;assertion violated +\\(runners<=1\\);wake() without CAS, T4 unchecked: two runners"
  # 4. The pool's thread wake-up (pool-wake.pml): a loop queued behind a
  #    slice that waits for it is run by the other thread; no cycle; and
  #    without the pop rule SPIN finds the deadlock.
  "pool-wake;;$cc_safety;-m10000 -w24;pass;pool wake-up: 3 loops in every order, one waiting for another, 2 threads, one sleeper woken per wake, a loop handed to a sleeper in its slot"
  "pool-wake-no-cycles;;$cc_cycles;-l -m10000 -w24;pass;pool wake-up: no cycle"
  "pool-broken-no-pop-rule;-DBROKEN_NO_POP_RULE;$cc_safety;-m10000 -w24;invalid end state;pool wake-up without the pop rule: a queued loop never runs"
  "pool-broken-no-flag;-DBROKEN_NO_FLAG;$cc_safety;-m10000 -w24;invalid end state;pool wake-up, a sleeper not re-checking its slot: a wake taken before it prepared its parker is lost and it sleeps unlisted"
  "pool-broken-no-claim-wait;-DBROKEN_NO_CLAIM_WAIT;$cc_safety;-m10000 -w24;assertion violated;pool wake-up, a claimed thread not waiting for its slot: the claim fills the slot of a thread listed again, or over a loop handed to it"
  #    The parker alone (parker.pml): waiters that consume one shared
  #    condition (a full bounded queue's space), each woken in time; the waiter that
  #    reads wake_seq late, or does not re-check, sleeps for ever.
  "parker;;$cc_safety;-m10000 -w24;pass;the parker: 3 waiters consuming one shared condition, each gets its token"
  "parker-broken-late-seq;-DBROKEN_LATE_SEQ;$cc_safety;-m10000 -w24;invalid end state;the parker's waiter reading wake_seq after registering: a notify ends its round unseen and it sleeps unregistered"
  "parker-broken-no-recheck;-DBROKEN_NO_RECHECK;$cc_safety;-m10000 -w24;invalid end state;the parker's waiter not re-checking after registering: a wake-up lost"
  "pool-broken-early-pop;-DBROKEN_EARLY_POP;$cc_safety;-m10000 -w24;invalid end state;pool wake-up, a pop after a search begun at a slice's end not taken as one after a wait: a queued loop never runs"
  #    A searcher switched out (-DSTALL): the rescue runs a loop queued
  #    behind it on the sleeping thread; without it, SPIN finds the deadlock.
  "pool-stall-no-cycles;-DSTALL;$cc_cycles;-l -m10000 -w24;pass;pool wake-up, a searcher switched out: no cycle"
  "pool-stall;-DSTALL;$cc_safety;-m10000 -w24;pass;pool wake-up, a searcher switched out while the other thread sleeps: the rescue runs the queued loops"
  "pool-broken-no-rescue;-DSTALL -DBROKEN_NO_RESCUE;$cc_safety;-m10000 -w24;invalid end state;a searcher switched out, no rescue: a queued loop waits for it while the other thread sleeps"
  # 5. Per-producer lanes (lanes.pml, LANES.md). Their safety at 2
  #    producers x 1 event, with membarrier: what the default scope checks
  #    of them (the 2 x 2 run, `lanes`, is --full's).
  "lanes-one-event;-DK=1;$cc_safety;-m40000 -w24;pass;lanes at 2 producers x 1 event: nothing lost, no lost wake-up, stop ends, each lane freed once"
  #    Without membarrier (other systems, old kernels, SPINDLE_PORTABLE):
  #    each producer fences after its BUSY store. The fence guards against
  #    lost events and wake-ups at an idle edge or a stop, which one event
  #    each shows: without any fence this configuration loses an event.
  "lanes-producer-fence;-DPRODUCER_FENCE -DK=1;$cc_safety;-m40000 -w24;pass;lanes without membarrier, producers fencing after BUSY: nothing lost, no lost wake-up, stop ends (2 producers x 1 event)"
  #    The runs that must fail.
  "lanes-broken-no-membarrier;-DBROKEN_NO_MEMBARRIER;$cc_safety;-m40000 -w24;assertion violated +!\\((lost_event|lost_wakeup)\\);lanes without the runner's membarrier: an event or a wake-up lost"
  "lanes-broken-count-first;-DBROKEN_COUNT_FIRST;$cc_safety;-m40000 -w24;assertion violated +!\\(lost_event\\);lanes whose count the runner reads before their BUSY: a stop finishes with an event in a lane"
  "lanes-broken-letgo-undrained;-DBROKEN_LETGO_UNDRAINED;$cc_safety;-m40000 -w24;assertion violated +\\(s==nextSeq;lanes let go before they drain: per-producer order broken"
  #    The bounded queue's admission (bounded.pml): a lane with a budget
  #    of 2, a shared share of 1, 4 + 2 events under `.block`.
  "bounded;;$cc_safety;-m10000 -w24;pass;bounded queue: a lane's budget and the shared share never exceeded, each producer in order, no lost wake-up"
  "bounded-no-cycles;;$cc_cycles;-l -m10000 -w24;pass;bounded queue: no cycle"
  "bounded-broken-fallback;-DBROKEN_FALLBACK;$cc_safety;-m10000 -w24;assertion violated +\\(s==next_seq;bounded queue whose full lane, finding room on a second look, sends the event through the shared queue: per-producer order broken"
  "bounded-broken-no-recheck;-DBROKEN_NO_RECHECK;$cc_safety;-m10000 -w24;invalid end state;bounded queue whose waiting producer does not re-check after registering: a wake-up lost"
  "broken-late-subscriber;-DBROKEN_LATE_SUBSCRIBER -DK=1;$cc_safety;-m10000 -w24;assertion violated +!\\(subscriber_unserved\\);streams ended before FINISHED: subscriber never served (2 producers x 1 event)"
  # 7. The inline fast path (SpindleNIO): an emit whose CAS wins runs the
  #    scheduling itself; one pool runner (the event loop's task queue).
  "inline;-DINLINE -DNR=1;$cc_safety;-m10000 -w26;pass;inline fast path, stop mode drain: 2 producers x 2 events that may run the loop, 1 runner, budget 1, stop, subscriber"
  "inline-discard;-DINLINE -DNR=1 -DDISCARD=1;$cc_safety;-m10000 -w26;pass;inline fast path, stop mode discard"
  "inline-ltl-no-lost-wakeup;-DINLINE -DNR=1;$cc_ltl;-a -N no_lost_wakeup -m10000 -w26;pass;inline fast path: LTL no_lost_wakeup"
  "inline-no-cycles;-DINLINE -DNR=1 -DSUBSCRIBER=0;$cc_cycles;-l -m10000 -w24;pass;inline fast path: no cycle (no subscriber)"
  "inline-broken-no-cas;-DINLINE -DNR=1 -DBROKEN_INLINE_NO_CAS;$cc_safety;-m10000 -w24;assertion violated +\\((runners<=1|sched==1)\\);inline path without the CAS: two runners"
  # 8. The direct path: an emit on the loop's context that finds the queue
  #    empty and the loop idle takes it (IDLE -> RUNNING) and keeps its
  #    event in the runner's own queue.
  "direct;-DINLINE -DDIRECT -DNR=1;$cc_safety;-m10000 -w26;pass;direct path, stop mode drain: 2 producers x 2 events that may take the loop, 1 runner, budget 1, stop, subscriber"
  "direct-discard;-DINLINE -DDIRECT -DNR=1 -DDISCARD=1;$cc_safety;-m10000 -w26;pass;direct path, stop mode discard"
  "direct-ltl-no-lost-wakeup;-DINLINE -DDIRECT -DNR=1;$cc_ltl;-a -N no_lost_wakeup -m10000 -w26;pass;direct path: LTL no_lost_wakeup"
  "direct-no-cycles;-DINLINE -DDIRECT -DNR=1 -DSUBSCRIBER=0;$cc_cycles;-l -m10000 -w24;pass;direct path: no cycle (no subscriber)"
  "direct-broken-any-queue;-DINLINE -DDIRECT -DNR=1 -DBROKEN_DIRECT_ANY_QUEUE;$cc_safety;-m10000 -w24;assertion violated +\\(ownSeq==nextSeq;direct path that ignores the queue: an event overtakes an older one of its producer"
  # 8b. The in-place path (SpindleNIO's emitOnOwnExecutor): the direct
  #    path's take, then a first slice that reduces the taker's own event
  #    alone and leaves the shared queue to the idle re-check (or the
  #    general slice: a loop's first one, one after a stop request).
  "in-place;-DINLINE -DDIRECT -DIN_PLACE -DNR=1;$cc_safety;-m10000 -w26;pass;in-place path, stop mode drain: 2 producers x 2 events that may take the loop and reduce their own first, 1 runner, budget 1, stop, subscriber"
  "in-place-discard;-DINLINE -DDIRECT -DIN_PLACE -DNR=1 -DDISCARD=1;$cc_safety;-m10000 -w26;pass;in-place path, stop mode discard"
  "in-place-ltl-no-lost-wakeup;-DINLINE -DDIRECT -DIN_PLACE -DNR=1;$cc_ltl;-a -N no_lost_wakeup -m10000 -w26;pass;in-place path: LTL no_lost_wakeup"
  "in-place-no-cycles;-DINLINE -DDIRECT -DIN_PLACE -DNR=1 -DSUBSCRIBER=0;$cc_cycles;-l -m10000 -w24;pass;in-place path: no cycle (no subscriber)"
  "in-place-broken-any-queue;-DINLINE -DDIRECT -DIN_PLACE -DNR=1 -DBROKEN_DIRECT_ANY_QUEUE;$cc_safety;-m10000 -w24;assertion violated +\\(ownSeq==nextSeq;in-place path that ignores the queue: its event overtakes an older one of its producer"
  "in-place-broken-no-recheck;-DINLINE -DDIRECT -DIN_PLACE -DNR=1 -DBROKEN_NO_RECHECK -DSUBSCRIBER=0;$cc_safety;-m10000 -w24;assertion violated +!\\(lost_wakeup\\);in-place path without the idle re-check: an event left in the queue"
  # 9. The reduction gate (stream(from:)'s demand): a granter grants one unit
  #    of demand per event, each a store then wake(); a slice reduces one
  #    event, through the open gate or after a stop.
  "gate;-DGATE -DNP=1 -DK=2;$cc_safety;-m10000 -w24;pass;reduction gate, stop mode drain: 1 producer x 2 events, 2 units of demand granted, 2 runners, stop, subscriber: never ahead of the demand, and drain's checks"
  "gate-two-producers;-DGATE -DK=1 -DSUBSCRIBER=0;$cc_safety;-m10000 -w24;pass;reduction gate, stop mode drain: 2 producers x 1 event, 2 units of demand, 2 runners, stop, no subscriber"
  "gate-ltl;-DGATE -DNP=1 -DK=2;$cc_ltl;-a -N no_lost_wakeup -m10000 -w24;pass;reduction gate: LTL no_lost_wakeup, queued events runnable while the gate is open or a stop was requested (1 producer x 2 events)"
  "gate-no-cycles;-DGATE -DNP=1 -DK=2 -DSUBSCRIBER=0;$cc_cycles;-l -m10000 -w24;pass;reduction gate: no cycle (1 producer x 2 events, no subscriber)"
  "gate-broken-no-recheck;-DGATE -DBROKEN_GATE_NO_RECHECK -DNP=1 -DK=2;$cc_safety;-m10000 -w24;assertion violated +!\\(lost_wakeup\\);reduction gate whose idle re-check reuses the gate loaded before the IDLE store: a grant in between is lost, the loop idle with an event queued and the gate open"
)

# 6. Runs that go alone, after the others (memory: the lanes safety run's
#    15 GB and this one's 4.5 GB would not fit side by side in 23 GB).
#    The lanes' runner reschedules while a producer holds BUSY (a wait on
#    that producer), so its cycles are checked under weak fairness; without
#    fairness SPIN must find that wait as a cycle, which shows the check
#    sees cycles at all. 2 producers x 1 event (x 2 events had passed 535 M
#    states and 6 GB after 7 minutes, unfinished).
alone=(
  "lanes-no-cycles;-DK=1;$cc_cycles -DNFAIR=7;-l -f -m40000 -w26;pass;lanes: no cycle under weak fairness, so every run ends (2 producers x 1 event, a racing stop)"
  "lanes-unfair-cycle;-DK=1;$cc_cycles;-l -m40000 -w24;non-progress cycle;lanes without fairness: the runner's wait for a producer that holds BUSY is a cycle"
)

# The runs only --full makes: the exhaustive ones that take minutes or
# more than 2 GB each (the lanes at 2 x 2: 15 GB; the cycle checks of the
# lanes and the pool's wake-up).
full_only=" lanes pool-wake-no-cycles pool-stall-no-cycles lanes-no-cycles lanes-unfair-cycle "
# The default scope checks these at 2 producers x 1 event (K=1), the same
# properties on a smaller state space; --full at 2 x 2.
one_event_in_default=" ltl-no-lost-wakeup drain discard inline inline-discard inline-ltl-no-lost-wakeup direct direct-discard direct-ltl-no-lost-wakeup in-place in-place-discard in-place-ltl-no-lost-wakeup "
if [ "$scope_full" != 1 ]; then
  kept=()
  for spec in "${checks[@]}"; do
    name=${spec%%;*}
    [[ $full_only == *" $name "* ]] && continue
    if [[ $one_event_in_default == *" $name "* ]]; then
      IFS=';' read -r name defs ccflags panargs expect what <<<"$spec"
      spec="$name;$defs -DK=1;$ccflags;$panargs;$expect;$what (here 2 producers x 1 event; --full: 2 x 2)"
    fi
    kept+=("$spec")
  done
  checks=("${kept[@]}")
  alone=()
fi

start=$SECONDS
running=0
for spec in "${checks[@]}"; do
  IFS=';' read -r name defs ccflags panargs _ <<<"$spec"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run "$name" "$defs" "$ccflags" "$panargs" &
  running=$((running + 1))
done
wait || true
for spec in ${alone[@]+"${alone[@]}"}; do
  IFS=';' read -r name defs ccflags panargs _ <<<"$spec"
  run "$name" "$defs" "$ccflags" "$panargs"
done
for spec in "${checks[@]}" ${alone[@]+"${alone[@]}"}; do
  IFS=';' read -r name _ _ _ expect what <<<"$spec"
  verdict "$name" "$expect" "$what"
done

if [ "$failed" != 0 ]; then
  echo "== model check FAILED ($((SECONDS - start)) s)"
  exit 1
fi
echo "== model check passed ($((SECONDS - start)) s)"
