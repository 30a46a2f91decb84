#!/usr/bin/env bash
# What a request costs the machine's caches, not its clock: the example
# server's handlers (Examples/HTTPExample) in NIO's HTTP pipeline on testing
# channels, many connections round robin (each connection's objects cold
# when its next request comes, as behind a socket), counted by callgrind's
# cache simulation. Prints, per request, the instructions, the first-level
# data misses and the last-level misses (a 512 KiB cache: the line loads a
# request costs once the kernel and the other connections have run), for
# plain and for spindle-nio, then the difference and the functions it comes
# from. Deterministic: the same build gives the same figures (± a few
# hundredths, as allocation addresses move), which the load benchmark
# (scripts/load.sh), noisy by several per cent, cannot resolve.
#
# Usage: scripts/footprint.sh [connections, default 3000] [requests, default 30000]
set -euo pipefail
cd "$(dirname "$0")/.."
connections=${1:-3000}
requests=${2:-30000}
source scripts/callgrind-driver.sh
prepare_callgrind_driver http-footprint http_footprint

for mode in plain spindle-nio; do
    echo "== callgrind: $mode, $connections connections, $requests requests" >&2
    valgrind --tool=callgrind --cache-sim=yes --LL=524288,8,64 --toggle-collect="$measured" \
        --callgrind-out-file="$work/$mode.out" "$driver" "$mode" "$connections" "$requests" \
        >"$work/$mode.log" 2>&1 || { cat "$work/$mode.log" >&2; exit 1; }
    grep -q "requests answered" "$work/$mode.log" || { cat "$work/$mode.log" >&2; exit 1; }
done

python3 - "$work" "$requests" <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, "scripts")
from callgrind_costs import EVENTS as events, load, misses
work, requests = sys.argv[1], float(sys.argv[2])

(plain, plain_functions), (spindle, spindle_functions) = (load(f"{work}/{mode}.out", sort="DLmr") for mode in ("plain", "spindle-nio"))
def row(label, values):
    d1, ll = misses(values)
    print(f"| {label} | {values[0] / requests:,.0f} | {d1 / requests:.1f} | {ll / requests:.1f} |")
print("per request | instructions | L1 data misses | last-level misses (512 KiB) |")
print("| --- | --- | --- | --- |")
row("plain", plain)
row("spindle-nio", spindle)
row("spindle-nio − plain", [b - a for a, b in zip(plain, spindle)])
print()
print("Where spindle-nio's extra last-level misses are (per request; functions with the largest difference):")
rows = []
for name in set(plain_functions) | set(spindle_functions):
    a = plain_functions.get(name, [0.0] * len(events))
    b = spindle_functions.get(name, [0.0] * len(events))
    rows.append(((misses(b)[1] - misses(a)[1]) / requests, name))
for difference, name in sorted(rows, reverse=True)[:15]:
    print(f"  {difference:+5.2f}  {name[:110]}")
PY
