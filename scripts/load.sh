#!/usr/bin/env bash
# The server benchmark: the example HTTP server (Examples/HTTPServer) in each
# mode — `plain` (a plain NIO ChannelInboundHandler, the yardstick),
# `spindle-nio` (SpindleNIO's SpinHandler: the loop on the channel's event
# loop) and `spindle-pool` (the same spin on the shared reducer pool) — on
# loopback with 2 event loops, loaded by wrk (2 threads) at 100 and 1,000
# connections, and at 100 with 10,000 idle connections held open. Prints
# the machine's CPU, one Markdown table of medians, then each mode's idle
# CPU and requests/s per round, and the ratios to `plain` measured in this
# run.
#
# Usage: scripts/load.sh [seconds per mode per round, default 10]
#   SPINDLE_LOAD_REPEATS=N: rounds per cell (default 5). A round gives
#   each mode the same seconds in SPINDLE_LOAD_SLICES slices (default 5,
#   of 2 s each), the modes' slices alternating and their order rotated
#   every slice: a slow phase of the machine (it has them, for seconds at
#   a time) falls on every mode of the round alike. A round's requests/s
#   is the mean of its slices'; each figure is the median of its rounds,
#   the latencies the medians of the slices'. Each round's ratio to plain
#   is printed, with its lowest.
#   SPINDLE_LOAD_MODES="plain spindle-nio": only these modes (default: all
#   three; the ratios need plain). The mode `plain-control` is a second
#   plain server: its ratios to plain are the noise floor of the run (what
#   the machine's own variation makes of two identical servers).
#   SPINDLE_LOAD_SMOKE=1: one second per cell, one slice, and 1,000 idle
#   connections (CI's smoke test: the script and every mode work; the
#   figures mean nothing).
#
# A benchmark, not a test: run it on a quiet machine, and compare ratios
# within one run, never figures across runs or machines.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
repeats=${SPINDLE_LOAD_REPEATS:-5}
slices=${SPINDLE_LOAD_SLICES:-5}
idle=10000
if [[ ${SPINDLE_LOAD_SMOKE:-0} == 1 ]]; then
    seconds=1
    repeats=1
    slices=1
    idle=1000
fi
# wrk takes whole seconds.
slice_seconds=$(( seconds / slices ))
if (( slice_seconds < 1 || slice_seconds * slices != seconds )); then
    echo "load: $seconds s per round cannot be cut into $slices slices of whole seconds" >&2
    exit 1
fi

if ! command -v wrk >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
scripts/install-deps.sh >/dev/null
# 10,000 idle connections and 1,000 busy ones: the server, the idle holder
# and wrk each need a descriptor per connection (each process has its own
# limit): raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (( $(ulimit -n) < idle + 1100 )); then
    echo "load: $idle idle connections need $((idle + 1100)) descriptors per process; the limit here is $(ulimit -n) (ulimit -Hn)" >&2
    exit 1
fi

echo "== build (release)" >&2
swift build -c release --product spindle-http-server >&2
server_bin="$(swift build -c release --show-bin-path)/spindle-http-server"

work=$(mktemp -d)
server_pid=""
holder_pid=""
cleanup() {
    [[ -n $holder_pid ]] && kill "$holder_pid" 2>/dev/null || true
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The server's resident set (KiB) and thread count.
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
thread_count() { ls "/proc/$1/task" | wc -l; }
# The server's CPU time so far, in clock ticks (user + system).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start_server() {
    local mode=$1
    # plain-control: a second plain server (the noise floor).
    "$server_bin" --mode "${mode%-control}" --port 0 --threads 2 >"$work/$mode.out" 2>"$work/$mode.err" &
    server_pid=$!
    for _ in $(seq 1 600); do
        if grep -q "^listening on" "$work/$mode.out" 2>/dev/null; then break; fi
        sleep 0.1
    done
    port=$(awk '/^listening on/ { print $3 }' "$work/$mode.out")
    [[ -n $port ]] || { echo "load: the $mode server did not start" >&2; cat "$work/$mode.err" >&2; exit 1; }
    # Every mode answers the same bytes.
    curl -s -D - "http://127.0.0.1:$port/" -o "$work/body" >"$work/headers" 2>/dev/null || true
    if [[ "$(cat "$work/body")" != "Hello, World!" ]]; then
        echo "load: the $mode server answered '$(cat "$work/body")'" >&2
        exit 1
    fi
}

stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# Runs wrk; prints "requests/s p50 p99 errors".
run_wrk() {
    local connections=$1
    local out="$work/wrk.out"
    wrk -t2 -c"$connections" -d"${slice_seconds}s" --latency --timeout 10s "http://127.0.0.1:$port/" >"$out" 2>&1 || true
    python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
def latency(p):
    m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\b" % p, text, re.M)
    if not m: return "n/a"
    value, unit = float(m.group(1)), m.group(2)
    ms = value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    return f"{ms:.2f} ms"
errors = 0
m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
if m: errors += sum(int(x) for x in m.groups())
m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
if m: errors += int(m.group(1))
if not rps:
    sys.stderr.write(text)
print(rps.group(1) if rps else "0", latency(50).replace(" ", "_"), latency(99).replace(" ", "_"), errors)
PY
}

# Opens and holds `count` idle connections until killed.
hold_idle() {
    local count=$1
    python3 -u - "$port" "$count" >"$work/holder.out" 2>&1 <<'PY' &
import socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(count):
    held.append(socket.create_connection(("127.0.0.1", port)))
print("held", len(held), flush=True)
while True:
    time.sleep(3600)
PY
    holder_pid=$!
    for _ in $(seq 1 1200); do
        if grep -q "^held" "$work/holder.out" 2>/dev/null; then return; fi
        sleep 0.1
    done
    echo "load: could not hold $count idle connections" >&2
    cat "$work/holder.out" >&2
    exit 1
}

# Every mode's server runs at once for the busy cells (an idle server costs
# nothing: see the idle CPU below), and each cell is measured in rounds of
# alternating slices (`run_round`), so that a slow or fast phase of the
# machine falls on every mode alike; each figure is the median of its
# rounds, and each mode's rounds are printed under the table.
declare -A port_of pid_of threads_of
declare -A rps_runs p50_runs p99_runs errors_of rss_of cpu_of
ticks_per_second=$(getconf CLK_TCK)
modes=(${SPINDLE_LOAD_MODES:-plain spindle-nio spindle-pool})
for mode in "${modes[@]}"; do
    start_server "$mode"
    pid_of[$mode]=$server_pid
    port_of[$mode]=$port
    # Warm up: connections accepted, code paged in.
    wrk -t2 -c100 -d1s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
done
server_pids="${pid_of[*]}"
server_pid=""
cleanup_servers() { for pid in $server_pids; do kill "$pid" 2>/dev/null || true; done; }
trap 'cleanup_servers; cleanup' EXIT

record() {  # record MODE CELL ROUND "rps p50 p99 errors" (one slice)
    local mode=$1 cell=$2 round=$3 rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$4"
    rps_runs[$mode,$cell,$round]+="$rps "
    p50_runs[$mode,$cell]+="${p50%_ms} "
    p99_runs[$mode,$cell]+="${p99%_ms} "
    errors_of[$mode,$cell]=$(( ${errors_of[$mode,$cell]:-0} + errors ))
}

# One round of a cell: `slices` slices per mode, alternating, the order
# rotated every slice.
run_round() {  # run_round CELL CONNECTIONS ROUND
    local cell=$1 connections=$2 round=$3 slice i mode
    for slice in $(seq 1 "$slices"); do
        for i in $(seq 0 $((count - 1))); do
            mode=${modes[$(( (i + round + slice - 2) % count ))]}
            port=${port_of[$mode]}
            echo "== round $round/$repeats, slice $slice/$slices, $cell: $mode" >&2
            record "$mode" "$cell" "$round" "$(run_wrk "$connections")"
            threads_of[$mode,$cell]=$(thread_count "${pid_of[$mode]}")
        done
    done
}

count=${#modes[@]}
for round in $(seq 1 "$repeats"); do
    for connections in 100 1000; do run_round "$connections" "$connections" "$round"; done
done
cleanup_servers
for mode in "${modes[@]}"; do wait "${pid_of[$mode]}" 2>/dev/null || true; done
server_pids=""

# Idle connections: every mode's server again, each with its own holder of
# `idle` idle connections. Memory per connection and CPU while idle are
# measured for one server at a time (a process's resident set and CPU time
# are its own, whatever the others hold); then 100 busy connections beside
# the idle ones, in rounds of alternating slices, as above: a slow phase
# of the machine falls on every mode alike (measured one mode after the
# other, a phase change between them passed for a difference of the
# modes).
declare -A holder_of
for mode in "${modes[@]}"; do
    echo "== $mode, $idle idle connections" >&2
    start_server "$mode"
    pid_of[$mode]=$server_pid
    port_of[$mode]=$port
    threads_idle=$(thread_count "$server_pid")
    wrk -t2 -c100 -d1s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
    sleep 1
    rss_before=$(rss_kib "$server_pid")
    hold_idle "$idle"
    holder_of[$mode]=$holder_pid
    sleep 2
    rss_idle=$(rss_kib "$server_pid")
    ticks_before=$(cpu_ticks "$server_pid")
    sleep 5
    ticks_after=$(cpu_ticks "$server_pid")
    cpu_ms=$(( (ticks_after - ticks_before) * 1000 / ticks_per_second / 5 ))
    rss_of[$mode]=$(python3 -c "print(f'{($rss_idle - $rss_before) / $idle:.2f} KiB')")
    cpu_of[$mode]="$cpu_ms ms/s idle ($threads_idle threads before load)"
done
server_pids="${pid_of[*]}"
holder_pids="${holder_of[*]}"
server_pid=""
holder_pid=""
trap 'for pid in $holder_pids; do kill "$pid" 2>/dev/null || true; done; cleanup_servers; cleanup' EXIT
for round in $(seq 1 "$repeats"); do run_round idle 100 "$round"; done
for pid in $holder_pids; do kill "$pid" 2>/dev/null || true; done
for pid in $holder_pids; do wait "$pid" 2>/dev/null || true; done
holder_pids=""
cleanup_servers
for mode in "${modes[@]}"; do wait "${pid_of[$mode]}" 2>/dev/null || true; done
server_pids=""

# The table, the spreads and the ratios (of medians), in Python.
{
    echo "repeats $repeats"
    echo "slices $slices $slice_seconds"
    echo "idle $idle"
    echo "cpu $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo) ($(nproc) cores)"
    for mode in "${modes[@]}"; do
        for cell in 100 1000 idle; do
            rounds=""
            for round in $(seq 1 "$repeats"); do rounds+="${rps_runs[$mode,$cell,$round]},"; done
            echo "cell|$mode|$cell|$rounds|${p50_runs[$mode,$cell]}|${p99_runs[$mode,$cell]}|${errors_of[$mode,$cell]:-0}|${threads_of[$mode,$cell]:-?}"
        done
        echo "mode|$mode|${rss_of[$mode]}|${cpu_of[$mode]}"
    done
} >"$work/figures"
python3 - "$work/figures" <<'PY'
import statistics, sys
cells, rss, cpu, modes = {}, {}, {}, []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("repeats "): repeats = int(line.split()[1])
    elif line.startswith("slices "): slices, slice_seconds = (int(x) for x in line.split()[1:])
    elif line.startswith("idle "): idle = line.split()[1]
    elif line.startswith("cpu "): machine = line[4:]
    elif line.startswith("cell|"):
        _, mode, cell, rounds, p50, p99, errors, threads = line.split("|")
        ms = lambda runs: [float(x) for x in runs.split() if x != "n/a"]
        # A round's requests/s: the mean of its slices' (equal durations).
        rps = [statistics.fmean(float(x) for x in r.split()) for r in rounds.split(",") if r.strip()]
        cells[mode, cell] = dict(rps=rps, p50=ms(p50), p99=ms(p99), errors=int(errors), threads=threads)
    elif line.startswith("mode|"):
        _, mode, per_connection, idle_cpu = line.split("|")
        modes.append(mode); rss[mode] = per_connection; cpu[mode] = idle_cpu
median = lambda xs: statistics.median(xs) if xs else 0.0
label = {"100": "100", "1000": "1000", "idle": f"{idle} idle + 100"}
print(f"\n{machine}; medians of {repeats} round(s) per cell, each round {slices} alternating slice(s) "
      f"of {slice_seconds} s per mode; latencies: medians of the slices'\n")
print("| mode | connections | requests/s | p50 | p99 | errors | RSS/conn | threads |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for mode in modes:
    for cell in ("100", "1000", "idle"):
        c = cells[mode, cell]
        print(f"| {mode} | {label[cell]} | {median(c['rps']):.0f} | {median(c['p50']):.2f} ms | "
              f"{median(c['p99']):.2f} ms | {c['errors']} | {rss[mode] if cell == 'idle' else '—'} | {c['threads']} |")
print()
for mode in modes:
    print(f"- {mode}: server CPU with {idle} idle connections: {cpu[mode]}; requests/s per round: "
          + "; ".join(f"{label[cell]}: " + ", ".join(f"{x:.0f}" for x in cells[mode, cell]["rps"])
                      for cell in ("100", "1000", "idle")))
if "plain" in modes:
    for mode in modes:
        if mode == "plain": continue
        parts, lowest = [], []
        for cell in ("100", "1000", "idle"):
            p, m = cells["plain", cell], cells[mode, cell]
            rps = f"{median(m['rps']) / median(p['rps']):.2f}×" if median(p["rps"]) > 0 else "n/a"
            p99 = f"{median(m['p99']) / median(p['p99']):.2f}×" if median(p["p99"]) > 0 else "n/a"
            rounds = [b / a for a, b in zip(p["rps"], m["rps"]) if a > 0]
            lowest += rounds
            parts.append(f"{label[cell]}: requests/s {rps}, p99 {p99}, rounds "
                         + ", ".join(f"{x:.2f}×" for x in rounds))
        print(f"- {mode} vs plain (medians; each round's ratio): " + "; ".join(parts)
              + (f"; lowest round {min(lowest):.2f}×" if lowest else ""))
PY
