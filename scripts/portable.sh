#!/usr/bin/env bash
# The portable path, on Linux: builds the package with SPINDLE_PORTABLE
# (CSupport/spindle_internal.h), which compiles what other systems run in
# place of the Linux-only system calls — a condition variable for the
# parker's futex, producers that fence for themselves for the lanes'
# membarrier — checks that the build really uses it, then runs the unit
# tests and a short plain (non-TSan) stress round on it.
#
# Its own scratch path (.build/portable): the default build is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scratch=.build/portable

echo "== build with SPINDLE_PORTABLE (scratch path $scratch)"
swift build --build-tests --scratch-path "$scratch" -Xcc -DSPINDLE_PORTABLE

# The objects name no Linux-only call: the parker waits on a condition
# variable and the lanes never call membarrier (through syscall(2)).
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"
objects="$bin/CSpindle.build"
for object in spindle_parker.c.o spindle_lane.c.o; do
    if nm -u "$objects/$object" | grep -qw syscall; then
        echo "portable: $object still calls syscall(2): SPINDLE_PORTABLE did not take" >&2
        exit 1
    fi
done
if ! nm -u "$objects/spindle_parker.c.o" | grep -qw pthread_cond_wait; then
    echo "portable: the parker does not wait on a condition variable" >&2
    exit 1
fi

tests="$bin/SpindlePackageTests.xctest"
echo "== unit and contract tests on the portable path"
SWIFT_BACKTRACE=enable=no timeout --kill-after=30 "${SPINDLE_UNIT_LIMIT:-1800}" \
    "$tests" --testing-library swift-testing --skip SpindleStressTests
echo "== stress suite on the portable path (plain, short)"
SWIFT_BACKTRACE=enable=no SPINDLE_STRESS_EVENTS=400000 SPINDLE_STRESS_CYCLES=500 SPINDLE_STRESS_ROUNDS=3 \
    timeout --kill-after=30 "${SPINDLE_STRESS_LIMIT:-1800}" \
    "$tests" --testing-library swift-testing --filter SpindleStressTests
echo "== portable path passed"
