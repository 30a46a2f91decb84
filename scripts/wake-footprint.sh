#!/usr/bin/env bash
# What a sporadic round trip costs the machine's caches, not its clock: the
# driver (Benchmarks/WakeFootprint) sleeps, evicts the caches (reads a
# buffer four times the simulated last level), emits one event and polls
# until an observer has published its state, as `latency-sporadic-100us`
# does, on the shared pool, a dedicated thread and the `DispatchQueue`
# yardstick. Callgrind counts every thread over two runs of different
# lengths; their difference, per round trip, is what one round trip costs
# beyond the process's start and end: instructions, and the lines it loads
# from memory (instruction and data misses of a 512 KiB last level), which
# after an idle pause are what a wake-up waits for. The eviction and the
# poll are left out. Nearly deterministic: runs of one build agree within
# a few dozen instructions and about one data line (the threads interleave
# differently under valgrind), where the latency scenarios move by
# microseconds. The instruction lines are the code's first-level misses
# and move with the code's layout between builds; the data lines do not.
#
# Usage: scripts/wake-footprint.sh [round trips, default 300] [engines, default "pool dedicated dispatch"]
set -euo pipefail
cd "$(dirname "$0")/.."
long=${1:-300}
engines=${2:-pool dedicated dispatch}
short=$((long / 3))
source scripts/callgrind-driver.sh
prepare_callgrind_driver wake-footprint wake_footprint

for engine in $engines; do
    for count in $short $long; do
        echo "== callgrind: $engine, $count round trips" >&2
        valgrind --tool=callgrind --cache-sim=yes --LL=524288,8,64 \
            --callgrind-out-file="$work/$engine-$count.out" "$driver" "$engine" "$count" \
            >"$work/$engine-$count.log" 2>&1 || { cat "$work/$engine-$count.log" >&2; exit 1; }
        grep -q "round trips answered" "$work/$engine-$count.log" || { cat "$work/$engine-$count.log" >&2; exit 1; }
    done
done

python3 - "$work" "$short" "$long" $engines <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, "scripts")
from callgrind_costs import load
work, short, long, engines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
events = "Ir ILmr DLmr DLmw".split()

def left_out(name):
    # The driver's eviction and poll: not the round trip's.
    return "14wake_footprint5evict" in name or "14wake_footprint4poll" in name

def per_round_trip(engine):
    (short_total, short_functions), (long_total, long_functions) = (
        load(f"{work}/{engine}-{count}.out", sort="DLmr", events=events) for count in (short, long))
    def net(total, functions):
        values = list(total)
        for name, costs in functions.items():
            if left_out(name):
                values = [a - b for a, b in zip(values, costs)]
        return values
    totals = [(b - a) / (long - short) for a, b in zip(net(short_total, short_functions), net(long_total, long_functions))]
    functions = {}
    for name in set(short_functions) | set(long_functions):
        if left_out(name):
            continue
        a = short_functions.get(name, [0.0] * len(events))
        b = long_functions.get(name, [0.0] * len(events))
        functions[name] = [(y - x) / (long - short) for x, y in zip(a, b)]
    return totals, functions

print("| per round trip | instructions | lines loaded (instructions) | lines loaded (data) | lines loaded |")
print("| --- | --- | --- | --- | --- |")
results = {engine: per_round_trip(engine) for engine in engines}
for engine, (totals, _) in results.items():
    print(f"| {engine} | {totals[0]:,.0f} | {totals[1]:.1f} | {totals[2] + totals[3]:.1f} | {totals[1] + totals[2] + totals[3]:.1f} |")
for engine, (_, functions) in results.items():
    print()
    print(f"{engine}: the functions that load the most lines (per round trip)")
    rows = sorted(((sum(costs[1:]), costs[0], name) for name, costs in functions.items()), reverse=True)
    for lines, instructions, name in rows[:12]:
        print(f"  {lines:5.1f} lines {instructions:7.0f} instructions  {name[:100]}")
PY
