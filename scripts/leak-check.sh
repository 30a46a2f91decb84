#!/usr/bin/env bash
# Leak check under valgrind (issue 4): the C target's tests, and start/stop
# cycles of the stress suite (loops with feedbacks in flight, stopped or
# released), run directly from the test bundle under memcheck.
#
# Criterion: 0 bytes "definitely lost". Reachable memory at exit (the Swift
# runtime's metadata caches, dispatch's and liburcu's per-process state) is
# not a leak and is not counted. --error-exitcode also fails the run on any
# other memcheck error (invalid read/write, uninitialised use); known
# toolchain noise is listed, with the reason for each entry, in
# scripts/valgrind.supp.
#
#   SPINDLE_LEAK_CYCLES   start/stop cycles under valgrind (default 300: memcheck
#                         runs threads one at a time, ~50x slower)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if ! command -v valgrind >/dev/null; then
    echo "== installing valgrind"
    if [[ $(id -u) -eq 0 ]]; then apt-get update && apt-get install -y valgrind
    else sudo apt-get update && sudo apt-get install -y valgrind; fi
fi

# A scratch path of its own: a plain debug build (no sanitizer: valgrind and
# TSan do not mix), out of the way of the normal .build.
scratch=.build/valgrind
echo "== build ($scratch)"
swift build --build-tests --scratch-path "$scratch"
bundle="$scratch/debug/SpindlePackageTests.xctest"
[[ -x $bundle ]] || { echo "test bundle not found at $bundle" >&2; exit 1; }

logs=$(mktemp -d)
status=0
run() {  # run NAME FILTER: one memcheck run of the bundle's Swift Testing tests matching FILTER
    local name=$1 filter=$2 log="$logs/$1.log" started rc
    echo "== valgrind: $name (--filter '$filter')"
    started=$(date +%s)
    set +e
    SPINDLE_STRESS_CYCLES=${SPINDLE_LEAK_CYCLES:-300} \
    valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --error-exitcode=1 --num-callers=30 \
        --suppressions=scripts/valgrind.supp --fair-sched=yes \
        "$bundle" --testing-library swift-testing --filter "$filter" >"$log" 2>&1
    rc=$?
    set -e
    grep -E "definitely lost|indirectly lost|ERROR SUMMARY|Test run with" "$log" | sed 's/^==[0-9]*== /  /'
    local ran
    ran=$(grep -cE "Test run with [1-9][0-9]* tests? .* passed" "$log" || true)
    echo "  exit status $rc, $(( $(date +%s) - started )) s; log: $log"
    if [[ $rc -ne 0 || $ran -eq 0 ]]; then
        echo "  FAILED: $name (see the log for the loss records or failed tests)" >&2
        status=1
    fi
}

run c-target 'CSpindleTests'
run start-stop-cycles 'StartStopCycleStressTests'

if [[ $status -eq 0 ]]; then
    echo "leak check passed: 0 bytes definitely lost, no memcheck errors"
fi
exit $status
