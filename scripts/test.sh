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
# `--full` (CI passes it) runs the stress suite at CI's scale, DocC, every
# model-check run (the lanes' 2 x 2 safety run alone needs 15 GB), a 60 s
# soak in release and 60 s of fuzzing.
#
# With other arguments, it runs only `swift test` with them instead
# (e.g. `scripts/test.sh --filter Levels`).
set -euo pipefail
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
echo "== scope: $scope"
started=$(date +%s)
echo "== unit and contract tests (swift test --skip SpindleStressTests)"
# Bounded: a hang fails here, not at CI's limit.
timeout --kill-after=30 "${SPINDLE_UNIT_LIMIT:-1800}" swift test --skip SpindleStressTests
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
echo "== model check of the scheduling protocol (scripts/model-check.sh)"
scripts/model-check.sh ${model_args[@]+"${model_args[@]}"}
model_done=$(date +%s)
echo "== soak, $soak_seconds s (scripts/soak.sh)"
scripts/soak.sh "$soak_seconds"
soak_done=$(date +%s)
fuzz_report="no fuzzing (--full)"
if (( fuzz_seconds > 0 )); then
    echo "== fuzz the recording reader, $fuzz_seconds s (scripts/fuzz.sh)"
    scripts/fuzz.sh "$fuzz_seconds"
    fuzz_report="fuzz $(($(date +%s) - soak_done)) s"
fi
echo "== tests passed ($scope scope): unit $((unit_done - started)) s, docs $((docs_done - unit_done)) s, stress $((stress_done - docs_done)) s, leak check $((leaks_done - stress_done)) s, model check $((model_done - leaks_done)) s, soak $((soak_done - model_done)) s, $fuzz_report"
