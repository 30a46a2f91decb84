#!/usr/bin/env bash
# The whole package as a user runs it: `swift test` and
# `swift test --sanitize=thread`, every test target in parallel (Swift
# Testing's default), with two CPU-bound processes beside them on the
# machine's cores (stress-ng). This is where a path that blocks a
# cooperative thread shows: the async feedbacks of one test starve while
# another test's code holds the cooperative pool (two threads on two cores).
#
# The stress suite runs here at a reduced scale (it runs at full scale, one
# test at a time, in scripts/stress.sh); what this stage checks is the
# suites beside each other under load.
#
# Under Thread Sanitizer on a busy machine, the Swift runtime's own locks
# (priority-inheritance futexes) can leave threads asleep for minutes with
# no owner inside the lock; scripts/runtime-stall-watch.py, beside each
# run, records such a stall (threads, futex word, owner, every stack) and
# ends it with a debugger attach, and the run's line counts them. It
# touches nothing of Spindle's: no wait of Spindle's is on such a futex.
#
# CI runs the plain half only (--plain): on the machine CI runs on, that
# stall comes in whole-package TSan runs with or without the hogs, and also
# in a form the watcher neither sees nor ends (the owner the futex word
# names is itself running in the runtime's `once`, asking for that lock),
# so the tests behind it fail. The stress suite under TSan, one test at a time
# (scripts/stress.sh), is CI's Thread Sanitizer stage; run this script
# without --plain by hand for the rest of the package under TSan. To see
# the stall quickly: `swift test --sanitize=thread --scratch-path
# .build/tsan --filter LifecycleTests` in a loop, with the watcher beside
# it at SPINDLE_STALL_SECONDS=30. (The evidence is in the commit messages
# of 2ae33ed, 63e7f8b, d20c677 and bb042fe, and in CONTRIBUTING.)
#
# Usage: scripts/parallel.sh [runs] [--quiet] [--plain]   (default 1 run of
# each, beside two CPU hogs; --quiet: without them; --plain: `swift test`
# only, no TSan build. Any failure, hang or TSan report fails the script,
# and the count is printed.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# stress-ng for the hogs, gdb for the stall watcher's stacks.
if ! command -v stress-ng >/dev/null 2>&1 || ! command -v gdb >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng gdb >/dev/null
fi

runs=1
hogs_count=2
modes="plain tsan"
for argument in "$@"; do
    case $argument in
        --quiet) hogs_count=0 ;;
        --plain) modes="plain" ;;
        *) runs=$argument ;;
    esac
done
limit=${SPINDLE_PARALLEL_LIMIT:-1800}
logs=${SPINDLE_PARALLEL_LOGS:-$(mktemp -d)}
mkdir -p "$logs"
export SPINDLE_STRESS_EVENTS=${SPINDLE_STRESS_EVENTS:-1000000}
export SPINDLE_STRESS_CYCLES=${SPINDLE_STRESS_CYCLES:-1000}
export SPINDLE_STRESS_ROUNDS=${SPINDLE_STRESS_ROUNDS:-5}
# Tests that may crash run without the backtracer (it can hang for minutes
# in a process with thousands of threads).
export SWIFT_BACKTRACE=enable=no
# A test that runs out its hang guard says whether the main queue and the
# main actor still ran work, and leaves every thread's stack here.
export SPINDLE_HANG_STACKS="$logs"

echo "== build (debug$([[ $modes == *tsan* ]] && echo ", and Thread Sanitizer in .build/tsan"))"
swift build --build-tests
if [[ $modes == *tsan* ]]; then
    swift build --build-tests --sanitize=thread --scratch-path .build/tsan
fi

if [[ $hogs_count -gt 0 ]]; then
    echo "== beside $hogs_count CPU hogs (stress-ng --cpu $hogs_count)"
    stress-ng --cpu "$hogs_count" --timeout "$((limit * runs * 2))s" >/dev/null 2>&1 &
    hogs=$!
    trap 'kill $hogs 2>/dev/null || true' EXIT
else
    echo "== on a quiet machine"
fi

failures=0
for run in $(seq 1 "$runs"); do
    for mode in $modes; do
        log="$logs/$mode-$run.log"
        started=$(date +%s)
        set +e
        if [[ $mode == plain ]]; then
            timeout --kill-after=30 "$limit" swift test --skip-build >"$log" 2>&1 &
        else
            timeout --kill-after=30 "$limit" swift test --skip-build --sanitize=thread --scratch-path .build/tsan >"$log" 2>&1 &
        fi
        test_pid=$!
        # The Swift runtime's lock stall (see the watcher): recorded, and
        # ended, so that it does not pass for a hang of the tests it stops.
        scripts/runtime-stall-watch.py "$test_pid" "$log" &
        watcher=$!
        wait "$test_pid"
        status=$?
        kill "$watcher" 2>/dev/null
        wait "$watcher" 2>/dev/null
        set -e
        reports=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
        summary=$(grep -E "^. Test run with" "$log" | tail -1 || true)
        stalls=$(grep -c "^stall" "$log.stalls" 2>/dev/null || true)
        echo "run $run, $mode: exit $status, $reports TSan reports, ${stalls:-0} runtime lock stalls, $(( $(date +%s) - started )) s: $summary"
        if [[ ${stalls:-0} -gt 0 ]]; then cat "$log.stalls"; fi
        if [[ $status -ne 0 || $reports -ne 0 ]]; then
            failures=$((failures + 1))
            grep -E "✘|WARNING: ThreadSanitizer" "$log" | head -20 >&2 || true
            grep -E "^SPINDLE-HANG" "$log" >&2 || true
            # The stacks this run's hangs wrote (the directory is shared by
            # every run of this script).
            for stacks in $(grep -oE "stacks in [^ ]+\.txt" "$log" | cut -d' ' -f3); do
                [[ -f $stacks ]] || continue
                echo "== $stacks: threads by name, and the frames of any on the main queue" >&2
                grep "^Thread " "$stacks" | sed 's/.*LWP [0-9]*) //' | sort | uniq -c | sort -rn >&2
                grep -B3 -A3 "main_queue\|main-thread\|_dispatch_main" "$stacks" | head -40 >&2 || true
            done
            echo "log: $log" >&2
        fi
    done
done
echo "parallel runs: $((runs * $(wc -w <<<"$modes") - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
