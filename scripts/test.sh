#!/usr/bin/env bash
# The README's test command: installs liburcu-dev if missing, then runs
#   1. the unit and contract tests (swift test, without the stress target),
#   2. the stress suite under Thread Sanitizer, with its canaries
#      (scripts/stress.sh),
#   3. the valgrind leak check (scripts/leak-check.sh),
#   4. the SPIN model check of the loop scheduling protocol
#      (scripts/model-check.sh),
#   5. the 60 s soak: a mixed workload, then every loop's books, a flat heap
#      and live objects back to zero (scripts/soak.sh),
#   6. 60 s of libFuzzer on the recording reader, after replaying every past
#      finding (scripts/fuzz.sh),
#   7. the documentation: the README's example is its snippet, every snippet
#      builds and runs, and DocC builds every product with warnings as
#      errors (scripts/docs.sh).
# With arguments, it runs only `swift test` with them instead
# (e.g. `scripts/test.sh --filter Levels`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [[ $# -gt 0 ]]; then
    exec swift test "$@"
fi
started=$(date +%s)
echo "== unit and contract tests (swift test --skip SpindleStressTests)"
# Bounded: a hang fails here, not at CI's limit.
timeout --kill-after=30 "${SPINDLE_UNIT_LIMIT:-1800}" swift test --skip SpindleStressTests
unit_done=$(date +%s)
echo "== documentation: snippets and DocC (scripts/docs.sh)"
scripts/docs.sh
docs_done=$(date +%s)
echo "== stress suite under Thread Sanitizer (scripts/stress.sh)"
scripts/stress.sh
stress_done=$(date +%s)
echo "== leak check under valgrind (scripts/leak-check.sh)"
scripts/leak-check.sh
leaks_done=$(date +%s)
echo "== model check of the scheduling protocol (scripts/model-check.sh)"
scripts/model-check.sh
model_done=$(date +%s)
echo "== soak, 60 s (scripts/soak.sh)"
scripts/soak.sh 60
soak_done=$(date +%s)
echo "== fuzz the recording reader, 60 s (scripts/fuzz.sh)"
scripts/fuzz.sh 60
finished=$(date +%s)
echo "== tests passed: unit $((unit_done - started)) s, docs $((docs_done - unit_done)) s, stress $((stress_done - docs_done)) s, leak check $((leaks_done - stress_done)) s, model check $((model_done - leaks_done)) s, soak $((soak_done - model_done)) s, fuzz $((finished - soak_done)) s"
