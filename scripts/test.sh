#!/usr/bin/env bash
# The README's test command: installs liburcu-dev if missing, then runs the
# whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift test "$@"
