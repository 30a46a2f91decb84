#!/usr/bin/env bash
# The README's test command: installs what it needs when missing (liburcu-dev,
# spin, gcc, valgrind), then runs
#   1. the unit and contract tests (swift test, without the stress target),
#   2. the stress suite under Thread Sanitizer, with its canaries
#      (scripts/stress.sh),
#   3. the valgrind leak check (scripts/leak-check.sh),
#   4. the SPIN model check of the loop scheduling protocol
#      (scripts/model-check.sh),
#   5. the soak: a mixed workload, then every loop's books, a flat heap
#      and live objects back to zero (scripts/soak.sh),
#   6. libFuzzer on the recording reader, after replaying every past
#      finding (scripts/fuzz.sh; --full only),
#   7. the documentation: the README's example is its snippet, every snippet
#      builds and runs, and (--full) DocC builds every product with
#      warnings as errors (scripts/docs.sh).
#
# Two scopes. The default is sized for a laptop: the stress suite at a
# reduced scale (on a TSan build without the trait-gated test targets), no
# DocC, the model check's default scope (scripts/model-check.sh:
# every run but the five exhaustive ones that take minutes or gigabytes,
# and the protocol's runs at 2 producers x 1 event), a 30 s soak on the
# debug build the unit stage made, and no fuzzing (the unit tests check
# each past finding's kind of input; scripts/fuzz.sh replays the findings
# themselves, then fuzzes).
# It also runs the model check beside the other stages, at the lowest CPU
# priority (nice 19), from the start: the stages leave one core idle much
# of the time (the stress suite's tests wait on threads and timers, the
# leak check's valgrind runs one thread, links and test runs leave cores
# idle), and the model check's runs take that time and yield the CPU back
# to the stages at once. Its log is printed once it and the stages before
# it are done; the summary gives its time beside the others and how long
# the script still waited for it.
# `--full` (CI passes it) runs the stress suite at CI's scale, DocC, every
# model-check run (the lanes' 2 x 2 safety run alone needs 15 GB), a 60 s
# soak in release and 60 s of fuzzing.
#
# With other arguments, it runs only `swift test` with them instead
# (e.g. `scripts/test.sh --filter Levels`).
set -euo pipefail
# SwiftPM lists the enabled traits' -D flags in a set's order, which Swift
# seeds anew in every process: two plans of the same build differ in their
# command lines, and the second recompiles every target (`swift build`
# after `swift test`). A fixed hash seed makes every plan the same. The
# tests run with it too (they rely on no hash order).
export SWIFT_DETERMINISTIC_HASHING=1
cd "$(dirname "$0")/.."
full=0
if [[ ${1:-} == --full ]]; then
    full=1
    shift
fi
if [[ $# -gt 0 ]]; then
    scripts/install-deps.sh
    exec swift test "$@"
fi
# Every tool the stages use, in one apt-get run, before any stage starts.
scripts/install-deps.sh spin gcc valgrind
if [[ $full == 1 ]]; then
    scope=full
    model_args=(--full)
    soak_seconds=60
    fuzz_seconds=60
else
    scope=default
    model_args=()
    soak_seconds=30
    fuzz_seconds=0
    export SPINDLE_SOAK_CONFIG="${SPINDLE_SOAK_CONFIG:-debug}"
    # The stress suite's scale, unless set (CI's: 10 M events per queue,
    # 10,000 cycles, 20 rounds; see scripts/stress.sh).
    export SPINDLE_STRESS_EVENTS="${SPINDLE_STRESS_EVENTS:-500000}"
    export SPINDLE_STRESS_CYCLES="${SPINDLE_STRESS_CYCLES:-1000}"
    export SPINDLE_STRESS_ROUNDS="${SPINDLE_STRESS_ROUNDS:-5}"
    # Its TSan build without the trait-gated test targets (scripts/stress.sh).
    export SPINDLE_STRESS_SLIM="${SPINDLE_STRESS_SLIM:-1}"
    # The snippets build and run; DocC is CI's (scripts/docs.sh).
    export SPINDLE_DOCS_DOCC="${SPINDLE_DOCS_DOCC:-0}"
fi
# The model check: waited for when it ran beside the stages, else run here.
model_check_stage() {
    if [[ -n $model_pid ]]; then
        echo "== model check (started beside the other stages): waiting for it"
        waited_from=$(date +%s)
        model_status=0
        wait "$model_pid" || model_status=$?
        model_pid=
        cat "$model_log"
        if (( model_status != 0 )); then
            echo "== the model check failed (exit $model_status)" >&2
            exit "$model_status"
        fi
        model_done=$(date +%s)
        model_report="model check $(sed -nE 's/^== model check passed \(([0-9]+) s\)$/\1/p' "$model_log") s beside the stages (waited $((model_done - waited_from)) s for it)"
    else
        stage_start=$(date +%s)
        echo "== model check of the scheduling protocol (scripts/model-check.sh)"
        scripts/model-check.sh ${model_args[@]+"${model_args[@]}"}
        model_done=$(date +%s)
        model_report="model check $((model_done - stage_start)) s"
    fi
}
echo "== scope: $scope"
started=$(date +%s)
model_pid=
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if [[ $full == 0 ]]; then
    echo "== model check of the scheduling protocol (scripts/model-check.sh), beside the other stages at nice 19"
    model_log=$(mktemp)
    # A session of its own (setsid), so that a failing stage stops it and
    # its pan runs together. Where the kernel groups each session's CPU time
    # (autogroup, on by default in most distributions), a new session would
    # get the same share as the stages whatever its processes' nice value:
    # its group's nice is set to 19 as well.
    setsid --wait bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 scripts/model-check.sh' \
        >"$model_log" 2>&1 &
    model_pid=$!
    trap '[[ -n $model_pid ]] && kill -- -"$model_pid" 2>/dev/null; rm -f "$model_log" "$build_log"' EXIT
fi
echo "== debug build of everything: the tests, the snippets, the tools (swift build --build-tests)"
# One build for the unit stage and the docs stage's snippets (and the
# soak's debug build): one plan, both cores busy to the end, where two
# builds in turn each planned and linked on their own. The docs stage
# checks this build's log for snippet warnings (SPINDLE_DOCS_BUILD_LOG).
if ! swift build --build-tests >"$build_log" 2>&1; then
    grep -E "error:" "$build_log" >&2 || tail -40 "$build_log" >&2
    echo "== the debug build failed" >&2
    exit 1
fi
grep -E "warning:|Build complete" "$build_log" || true
export SPINDLE_DOCS_BUILD_LOG="$build_log"
echo "== unit and contract tests (swift test --skip SpindleStressTests)"
# Bounded: a hang fails here, not at CI's limit.
timeout --kill-after=30 "${SPINDLE_UNIT_LIMIT:-1800}" swift test --skip-build --skip SpindleStressTests
unit_done=$(date +%s)
echo "== documentation: the README, the snippets, DocC in --full (scripts/docs.sh)"
scripts/docs.sh
docs_done=$(date +%s)
echo "== stress suite under Thread Sanitizer (scripts/stress.sh)"
scripts/stress.sh
stress_done=$(date +%s)
echo "== leak check under valgrind (scripts/leak-check.sh)"
scripts/leak-check.sh
leaks_done=$(date +%s)
# Beside the stages, the model check may still run during the soak (its
# checks are of memory, not speed); on its own, it runs before the soak.
[[ -n $model_pid ]] || model_check_stage
echo "== soak, $soak_seconds s (scripts/soak.sh)"
soak_start=$(date +%s)
scripts/soak.sh "$soak_seconds"
soak_done=$(date +%s)
[[ -z $model_pid ]] || model_check_stage
fuzz_report="no fuzzing (--full)"
if (( fuzz_seconds > 0 )); then
    echo "== fuzz the recording reader, $fuzz_seconds s (scripts/fuzz.sh)"
    scripts/fuzz.sh "$fuzz_seconds"
    fuzz_report="fuzz $(($(date +%s) - soak_done)) s"
fi
echo "== tests passed ($scope scope): unit $((unit_done - started)) s, docs $((docs_done - unit_done)) s, stress $((stress_done - docs_done)) s, leak check $((leaks_done - stress_done)) s, $model_report, soak $((soak_done - soak_start)) s, $fuzz_report"
