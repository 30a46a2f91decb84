#!/usr/bin/env bash
# The soak (issue 14): a mixed workload for a given time, then its books.
#   scripts/soak.sh [seconds]        (default 60; CI runs 60)
#   SPINDLE_SOAK_CONFIG=debug        the debug build instead of release
#                                    (scripts/test.sh's default scope: the
#                                    build its unit stage made; a slower
#                                    workload, the same checks)
# Builds the `soak` executable (release unless told) and runs it: 1,000
# loops with inline, async (both strategies) and queued feedbacks, gears
# and observers; producer threads, paced, that wait while the loops owe
# more than a bound (so a loaded machine slows the workload rather than
# piling it up); loops stopped and replaced all along. It fails unless
# every stopped loop's books balance (per-producer order, accepted =
# reduced, every echo accounted for), the heap in use after warm-up stays
# within 5 % (RSS within 20 %; see CONTRIBUTING.md's "The soak"), and every
# live object is freed at the end.
#
# MALLOC_ARENA_MAX=2, as CONTRIBUTING.md advises for long-running processes:
# glibc otherwise gives each thread that ever allocated an arena of its own
# and keeps them, and a soak that starts effect tasks on dispatch threads
# would measure the allocator's arenas rather than Spindle.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
seconds="${1:-60}"
config="${SPINDLE_SOAK_CONFIG:-release}"
swift build -c "$config" --product soak
bin=$(swift build -c "$config" --show-bin-path)
MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" "$bin/soak" --seconds "$seconds"
