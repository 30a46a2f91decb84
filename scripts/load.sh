#!/usr/bin/env bash
# The server benchmark: the example HTTP server (Examples/HTTPServer) in each
# mode — `plain` (a plain NIO ChannelInboundHandler, the yardstick),
# `spindle-nio` (SpindleNIO's SpinHandler: the loop on the channel's event
# loop) and `spindle-pool` (the same spin on the shared reducer pool) — on
# loopback with 2 event loops, loaded by wrk (2 threads) at 100 and 1,000
# connections, and at 100 with 10,000 idle connections held open. Prints
# one Markdown table, then the idle CPU and the ratios to `plain` measured
# in this run.
#
# Usage: scripts/load.sh [seconds per cell, default 10]
#   SPINDLE_LOAD_MODES="plain spindle-nio": only these modes (default: all
#   three; the ratios need plain).
#   SPINDLE_LOAD_SMOKE=1: one second per cell and 1,000 idle connections
#   (CI's smoke test: the script and every mode work; the figures mean
#   nothing).
#
# A benchmark, not a test: run it on a quiet machine, and compare ratios
# within one run, never figures across runs or machines.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
idle=10000
if [[ ${SPINDLE_LOAD_SMOKE:-0} == 1 ]]; then
    seconds=1
    idle=1000
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
    "$server_bin" --mode "$mode" --port 0 --threads 2 >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    for _ in $(seq 1 600); do
        if grep -q "^listening on" "$work/server.out" 2>/dev/null; then break; fi
        sleep 0.1
    done
    port=$(awk '/^listening on/ { print $3 }' "$work/server.out")
    [[ -n $port ]] || { echo "load: the $mode server did not start" >&2; cat "$work/server.err" >&2; exit 1; }
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
    wrk -t2 -c"$connections" -d"${seconds}s" --latency --timeout 10s "http://127.0.0.1:$port/" >"$out" 2>&1 || true
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

rows=()
declare -A rps_of p99_of rss_of cpu_of
ticks_per_second=$(getconf CLK_TCK)
modes=${SPINDLE_LOAD_MODES:-plain spindle-nio spindle-pool}
for mode in $modes; do
    echo "== $mode" >&2
    start_server "$mode"
    threads_idle=$(thread_count "$server_pid")
    # Warm up (connections accepted, code paged in), then the two loads.
    wrk -t2 -c100 -d1s "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
    for connections in 100 1000; do
        read -r rps p50 p99 errors < <(run_wrk "$connections")
        rows+=("| $mode | $connections | $rps | ${p50//_/ } | ${p99//_/ } | $errors | — | $(thread_count "$server_pid") |")
        rps_of[$mode,$connections]=$rps
        p99_of[$mode,$connections]=${p99//_/ }
    done
    # Idle connections: memory per connection and CPU while idle, then 100
    # busy ones beside them.
    sleep 1
    rss_before=$(rss_kib "$server_pid")
    hold_idle "$idle"
    sleep 2
    rss_idle=$(rss_kib "$server_pid")
    ticks_before=$(cpu_ticks "$server_pid")
    sleep 5
    ticks_after=$(cpu_ticks "$server_pid")
    cpu_ms=$(( (ticks_after - ticks_before) * 1000 / ticks_per_second / 5 ))
    per_connection=$(python3 -c "print(f'{($rss_idle - $rss_before) / $idle:.2f} KiB')")
    read -r rps p50 p99 errors < <(run_wrk 100)
    rows+=("| $mode | $idle idle + 100 | $rps | ${p50//_/ } | ${p99//_/ } | $errors | $per_connection | $(thread_count "$server_pid") |")
    rps_of[$mode,idle]=$rps
    rss_of[$mode]=$per_connection
    cpu_of[$mode]="$cpu_ms ms/s idle ($threads_idle threads before load)"
    kill "$holder_pid" 2>/dev/null || true
    wait "$holder_pid" 2>/dev/null || true
    holder_pid=""
    stop_server
done

echo
echo "| mode | connections | requests/s | p50 | p99 | errors | RSS/conn | threads |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for row in "${rows[@]}"; do echo "$row"; done
echo
for mode in $modes; do
    echo "- $mode: server CPU with $idle idle connections: ${cpu_of[$mode]}"
done
python3 - "${rps_of[plain,100]:-0}" "${rps_of[spindle-nio,100]:-0}" "${rps_of[spindle-pool,100]:-0}" \
    "${rps_of[plain,1000]:-0}" "${rps_of[spindle-nio,1000]:-0}" "${rps_of[spindle-pool,1000]:-0}" \
    "${rps_of[plain,idle]:-0}" "${rps_of[spindle-nio,idle]:-0}" "${rps_of[spindle-pool,idle]:-0}" <<'PY'
import sys
v = [float(x) for x in sys.argv[1:]]
def ratio(a, b): return f"{a / b:.2f}×" if a > 0 and b > 0 else "n/a"
for i, cell in enumerate(["100", "1000", "idle + 100"]):
    plain, nio, pool = v[3 * i], v[3 * i + 1], v[3 * i + 2]
    print(f"- requests/s vs plain at {cell}: spindle-nio {ratio(nio, plain)}, spindle-pool {ratio(pool, plain)}")
PY
