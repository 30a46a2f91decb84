#!/usr/bin/env bash
# The concurrency stress suite under Thread Sanitizer (issue 4).
#
# 1. Builds with --sanitize=thread in a scratch path of its own, so the
#    normal debug build in .build is left alone: the test bundle with every
#    trait on, in .build/tsan, which scripts/parallel.sh (CI) goes on to
#    use; or, with SPINDLE_STRESS_SLIM=1 (the README's test command), with
#    the package's traits off, in .build/tsan-slim: the stress suite needs
#    Spindle alone, and the trait-gated test targets then leave out
#    swift-nio, OpenCombine and swift-metrics, which would be compiled with
#    TSan for nothing.
# 2. Runs the SpindleStressTests target, one test at a time. Any TSan report
#    fails the run (TSan's exit code), as does any failed expectation.
# 3. Proves TSan is watching: runs each deliberately racy canary test with
#    SPINDLE_TSAN_CANARY=1 and fails unless that run reports "ThreadSanitizer"
#    and fails.
# 4. Prints the totals the tests reported (events checked per queue, cycles).
#
# Scale (defaults are the CI amounts; see Tests/SpindleStressTests/StressSupport.swift):
#   SPINDLE_STRESS_EVENTS  events per queue kind in the throughput test (10000000)
#   SPINDLE_STRESS_CYCLES  start/stop cycles (10000)
#   SPINDLE_STRESS_ROUNDS  rounds of the race-shaped tests (20)
#   SPINDLE_SOAK=1         also run the 60 s soak (SPINDLE_SOAK_SECONDS)
#   SPINDLE_STRESS_LIMIT   seconds before the suite counts as hung (1800)
#   SPINDLE_STRESS_SLIM=1  build with the traits off (see 1.)
# e.g. a quick local run:
#   SPINDLE_STRESS_EVENTS=400000 SPINDLE_STRESS_CYCLES=500 SPINDLE_STRESS_ROUNDS=3 scripts/stress.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

scratch=.build/tsan
traits=()
if [[ ${SPINDLE_STRESS_SLIM:-0} == 1 ]]; then
    scratch=.build/tsan-slim
    traits=(--disable-default-traits)
fi
logs=$(mktemp -d)
suite_limit=${SPINDLE_STRESS_LIMIT:-1800}
started=$(date +%s)

echo "== build (Thread Sanitizer, $scratch)"
# The test bundle alone: the suite needs nothing else, and the snippets,
# benchmarks and examples would each be compiled with TSan for nothing.
swift build --product SpindlePackageTests --sanitize=thread --scratch-path "$scratch" ${traits[@]+"${traits[@]}"}
built=$(date +%s)

echo "== stress suite under Thread Sanitizer"
suite_log="$logs/stress.log"
set +e
# Bounded: a hang fails the run here, with the log so far, instead of
# running into CI's limit with nothing to show.
timeout --kill-after=30 "$suite_limit" \
    swift test --sanitize=thread --scratch-path "$scratch" ${traits[@]+"${traits[@]}"} --skip-build --no-parallel \
    --filter SpindleStressTests 2>&1 | tee "$suite_log"
suite_status=${PIPESTATUS[0]}
set -e
suite_done=$(date +%s)
reports=$(grep -c "WARNING: ThreadSanitizer" "$suite_log" || true)

echo "== TSan canaries (each must be reported)"
canary_failures=0
for canary in racyCIncrementIsReported swiftFieldRaceIsReported payloadWrittenAfterTheEmitIsReported; do
    canary_log="$logs/canary-$canary.log"
    set +e
    SPINDLE_TSAN_CANARY=1 swift test --sanitize=thread --scratch-path "$scratch" ${traits[@]+"${traits[@]}"} --skip-build --no-parallel \
        --filter "TSanCanaryTests/$canary" >"$canary_log" 2>&1
    canary_status=$?
    set -e
    canary_reports=$(grep -c "WARNING: ThreadSanitizer" "$canary_log" || true)
    ran=$(grep -c "Test $canary() started" "$canary_log" || true)
    if [[ $canary_status -ne 0 && $canary_reports -gt 0 && $ran -gt 0 ]]; then
        echo "canary $canary: reported ($canary_reports TSan warnings, exit status $canary_status) - TSan is watching"
    else
        echo "canary $canary: NOT reported (ran $ran, exit status $canary_status, $canary_reports warnings)" >&2
        canary_failures=$((canary_failures + 1))
    fi
done
finished=$(date +%s)

echo "== totals"
awk '
    /^SPINDLE-STRESS / && $3 ~ /^queue=/ && $4 ~ /^[0-9]+$/ {
        split($3, q, "=")
        key = $2 " " q[2]
        total[key] += $4
    }
    /^SPINDLE-STRESS (cycles|storm|fanout|slow-reducer|soak|switched-out) / { print "  " substr($0, 16) }
    END {
        for (key in total) printf "  %-40s %12d\n", key, total[key] | "sort"
        close("sort")
    }' "$suite_log"
echo "  Thread Sanitizer reports in the suite: $reports"
echo "  time: build $((built - started)) s, suite $((suite_done - built)) s, canaries $((finished - suite_done)) s, total $((finished - started)) s"

status=0
if [[ $suite_status -eq 124 || $suite_status -eq 137 ]]; then
    echo "stress suite HUNG: stopped after $suite_limit s; log: $suite_log (buffered output may end before the test that hung)" >&2
    status=1
elif [[ $suite_status -ne 0 || $reports -ne 0 ]]; then
    echo "stress suite FAILED (exit status $suite_status, $reports TSan reports); log: $suite_log" >&2
    status=1
fi
if [[ $canary_failures -ne 0 ]]; then
    echo "$canary_failures canary run(s) were not reported: TSan is not watching, the suite proves nothing" >&2
    status=1
fi
[[ $status -eq 0 ]] && echo "stress suite passed: 0 TSan reports, every canary reported"
exit $status
