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
import re, subprocess, sys
work, requests = sys.argv[1], float(sys.argv[2])
events = "Ir D1mr D1mw DLmr DLmw".split()

def load(mode):
    out = subprocess.run(["callgrind_annotate", "--show=" + ",".join(events), "--sort=DLmr",
                          "--threshold=100", f"{work}/{mode}.out"], capture_output=True, text=True).stdout
    total, functions = None, {}
    number = r"([\d,]+|\.)(?: \([^)]*\))?\s+"
    for line in out.splitlines():
        m = re.match(r"\s*" + number * len(events) + r"(.*)", line)
        if not m:
            continue
        values = [0.0 if v == "." else float(v.replace(",", "")) for v in m.groups()[:len(events)]]
        name = m.group(len(events) + 1)
        if "PROGRAM TOTALS" in name:
            total = values
        else:
            functions[name.split(" [")[0].replace("???:", "")] = values
    return total, functions

(plain, plain_functions), (spindle, spindle_functions) = load("plain"), load("spindle-nio")
def row(label, values):
    ir, d1 = values[0] / requests, (values[1] + values[2]) / requests
    ll = (values[3] + values[4]) / requests
    print(f"| {label} | {ir:,.0f} | {d1:.1f} | {ll:.1f} |")
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
    rows.append(((b[3] + b[4] - a[3] - a[4]) / requests, name))
for difference, name in sorted(rows, reverse=True)[:15]:
    print(f"  {difference:+5.2f}  {name[:110]}")
PY
