#!/usr/bin/env bash
# Fuzzes the recording reader (SpindleReplay's SpinRecording) with libFuzzer
# and AddressSanitizer, for issue 14's promise: bad input never crashes.
# Every input must end in a recording or a RecordingError; a trap, another
# error type or a memory error is a finding. The fuzz target reads the whole
# way a user's code does: parse, replay from a given state, decode the
# header's initial state and replay from it (Fuzz/Sources/RecordingFuzzer).
#
# Why a package of its own (Fuzz/Package.swift, depending on the main one by
# path): the main package and its users never build libFuzzer's entry points
# or the sanitizer flags. Why a seed corpus of real recordings (Fuzz/Corpus,
# written by the real SpinRecorder): mutations of what the recorder actually
# writes reach the reader's deep paths in seconds; random bytes mostly stop
# at the first line.
#
# The committed corpus is never modified: libFuzzer works on a copy in a
# temporary directory. One process, a fixed memory limit and a fixed
# per-input timeout, so runs are comparable from machine to machine.
#
# Fails (non-zero) when libFuzzer finds a crash, a leak, a timeout or an
# out-of-memory; prints the input's path (kept in the temporary directory)
# and a hex dump of it. Save what it finds under Fuzz/Regressions/ with a
# line in its README.
#
#   scripts/fuzz.sh [seconds]          fuzz for that long (default 60)
#   scripts/fuzz.sh --write-seed-corpus
#                                      rewrite Fuzz/Corpus from the recorder
#   SPINDLE_FUZZ_KEEP_GOING=1          go on past findings (libFuzzer's fork
#                                      mode, still one worker) and collect
#                                      them all, for exploring a reader that
#                                      still has known findings
#
# Needs a Swift toolchain that ships libFuzzer (swift.org's Linux toolchains
# do; Xcode's does not). The build command, for running the fuzzer by hand,
# is below.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=fuzz seconds=60
case "${1:-}" in
    --write-seed-corpus) mode=seeds ;;
    "") ;;
    *)
        seconds=$1
        if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -eq 0 ]]; then
            echo "usage: scripts/fuzz.sh [seconds] | --write-seed-corpus" >&2
            exit 2
        fi
        ;;
esac
scripts/install-deps.sh

# Its own scratch path, because the sanitizer flags rebuild everything and
# must not thrash the normal .build.
#
# The flags: `--sanitize=fuzzer` makes SwiftPM link the executable for
# libFuzzer (libFuzzer's main, not the target's) and compiles the C target
# with coverage. ASan goes in `-Xswiftc -sanitize=fuzzer,address`, one flag
# and the last one: swiftc keeps only the last `-sanitize=`, and SwiftPM
# writes one per `--sanitize` in no fixed order, so `--sanitize=fuzzer
# --sanitize=address` gives either coverage or ASan from one build to the
# next, never both. `-Xcc -fsanitize=address` for the C target. lld, because
# gold warns that it cannot export one of ASan's symbols.
scratch=Fuzz/.build
fuzzer="$scratch/release/RecordingFuzzer"
echo "== build ($scratch)"
swift build --package-path Fuzz --scratch-path "$scratch" -c release \
    --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address \
    -Xswiftc -use-ld=lld --product RecordingFuzzer

# The toolchain's backtracer would catch the fatal signal before libFuzzer's
# handler, which writes the crashing input.
export SWIFT_BACKTRACE=enable=no

if [[ $mode == seeds ]]; then
    rm -f Fuzz/Corpus/*.jsonl
    "$fuzzer" --write-seed-corpus Fuzz/Corpus
    exit 0
fi

# Every past finding first, one at a time (given several files, libFuzzer
# stops at the first that crashes): each must now read as a recording or a
# RecordingError.
shopt -s nullglob
for input in Fuzz/Regressions/*.jsonl; do
    if ! "$fuzzer" "$input" >/dev/null 2>&1; then
        echo "fuzz: the past finding $input fails again: $fuzzer $input" >&2
        exit 1
    fi
done
shopt -u nullglob
echo "fuzz: every past finding in Fuzz/Regressions reads cleanly"
work=$(mktemp -d "${TMPDIR:-/tmp}/spindle-fuzz.XXXXXX")
mkdir "$work/corpus" "$work/artifacts"
cp Fuzz/Corpus/* Fuzz/Regressions/*.jsonl "$work/corpus/"

flags=(
    -max_total_time="$seconds"
    -print_final_stats=1
    -artifact_prefix="$work/artifacts/"
    -rss_limit_mb=2048
    -timeout=10
    -max_len=4096
)
if [[ "${SPINDLE_FUZZ_KEEP_GOING:-0}" == 1 ]]; then
    flags+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi

echo "== fuzz the recording reader for ${seconds} s (work directory: $work)"
started=$SECONDS
status=0
"$fuzzer" "${flags[@]}" "$work/corpus" 2>&1 | tee "$work/fuzz.log" | grep -v -E '^#[0-9]+.*(NEW|REDUCE)|NEW_FUNC' || status=${PIPESTATUS[0]}
elapsed=$((SECONDS - started))

# Executions: the final stats of a plain run; in fork mode, the parent's
# last status line (#executions: cov: …).
executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
if [[ -z "$executions" ]]; then
    executions=$({ grep -E '^#[0-9]+:? ' "$work/fuzz.log" || true; } | tail -1 | sed -E 's/^#([0-9]+).*/\1/')
fi
coverage=$({ grep -o -E 'cov: [0-9]+ ft: [0-9]+' "$work/fuzz.log" || true; } | tail -1)
shopt -s nullglob
findings=("$work"/artifacts/{crash,leak,timeout,oom}-*)
shopt -u nullglob

echo "fuzz: ${executions:-0} executions in ${elapsed} s, ${#findings[@]} crashes (${coverage:-no coverage reported}, corpus grown to $(ls "$work/corpus" | wc -l) inputs)"

if [[ ${#findings[@]} -gt 0 ]]; then
    for input in "${findings[@]}"; do
        echo
        echo "== finding: $input ($(wc -c <"$input") bytes)"
        echo "   reproduce: SWIFT_BACKTRACE=enable=no $fuzzer $input"
        od -A d -t x1z -v "$input" | head -64
        if [[ $(wc -c <"$input") -gt 1024 ]]; then echo "   (first 1024 bytes)"; fi
    done
    exit 1
fi
if [[ $status -ne 0 ]]; then
    echo "libFuzzer exited with status $status without an artifact: see $work/fuzz.log" >&2
    exit "$status"
fi
rm -rf "$work"
