#!/usr/bin/env bash
# The README's benchmark command: installs liburcu-dev if missing, then runs
# `swift run -c release benchmarks` with the given arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift run -c release benchmarks "$@"
