#!/usr/bin/env bash
# What one set costs a store, counted, not timed: `atoms-propagate`'s graph
# (Benchmarks/AtomsFootprint) under callgrind's cache simulation (a 4 MiB
# last level). Prints, per set, the instructions, the first-level data
# misses and the last-level misses, then the functions that run the most
# instructions. Deterministic: the same build gives the same figures (± a
# few hundredths), where the harness's atoms-propagate moves by tens of per
# cent with the machine's phases. The harness stays the figure of record.
#
# Usage: scripts/atoms-footprint.sh [sources, default 1000] [sets, default 20000]
set -euo pipefail
cd "$(dirname "$0")/.."
sources=${1:-1000}
sets=${2:-20000}
source scripts/callgrind-driver.sh
prepare_callgrind_driver atoms-footprint atoms_footprint

echo "== callgrind: $sources sources, $sets sets" >&2
valgrind --tool=callgrind --cache-sim=yes --LL=4194304,16,64 --toggle-collect="$measured" \
    --callgrind-out-file="$work/atoms.out" "$driver" "$sources" "$sets" \
    >"$work/atoms.log" 2>&1 || { cat "$work/atoms.log" >&2; exit 1; }
grep -q "sets:" "$work/atoms.log" || { cat "$work/atoms.log" >&2; exit 1; }
grep "sets:" "$work/atoms.log"

python3 - "$work/atoms.out" "$sets" <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, "scripts")
from callgrind_costs import load, misses
profile, sets = sys.argv[1], float(sys.argv[2])
total, functions = load(profile)
d1, ll = misses(total)
print("| per set | instructions | L1 data misses | last-level misses (4 MiB) |")
print("| --- | --- | --- | --- |")
print(f"| store | {total[0] / sets:,.0f} | {d1 / sets:.1f} | {ll / sets:.1f} |")
print()
print("The functions that run the most instructions (per set, mangled):")
for name, values in sorted(functions.items(), key=lambda item: -item[1][0])[:15]:
    print(f"{values[0] / sets:8,.0f}  {name[:150]}")
PY
