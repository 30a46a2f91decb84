#!/usr/bin/env bash
# The documentation stage of scripts/test.sh:
#   1. the README stays a front door (at most 250 lines) and its example is
#      the QuickStart snippet, character for character (the snippet's
#      description comment and hidden lines left out);
#   2. every snippet in Snippets/ (each example of the DocC manual) builds
#      with no warning and runs to exit 0: its hidden lines check that it
#      does what its article says;
#   3. the DocC documentation of every product builds with
#      --warnings-as-errors (a broken symbol link, article link or snippet
#      path fails it). SPINDLE_DOCS_DOCC=0 leaves this step out: the
#      README's test command does, in its default scope (it checks the
#      docs, not the code); `scripts/test.sh --full` (CI) and this script
#      alone run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== docs: README"
readme_lines=$(wc -l < README.md)
if (( readme_lines > 250 )); then
    echo "docs: README.md has $readme_lines lines; keep it at most 250 (the manual is DocC)" >&2
    exit 1
fi
python3 - <<'PY'
import re, sys
readme = open("README.md").read()
m = re.search(r"<!-- snippet: (\S+)[^>]*-->\n```swift\n(.*?)```", readme, re.S)
if not m:
    sys.exit("docs: README.md has no example marked <!-- snippet: PATH -->")
path, shown = m.group(1), m.group(2)
visible, hidden, started = [], False, False
for line in open(path).read().splitlines():
    stripped = line.strip()
    if not started and (stripped.startswith("//") or not stripped):
        continue  # the snippet's description comment
    started = True
    if stripped == "// snippet.hide": hidden = True; continue
    if stripped == "// snippet.show": hidden = False; continue
    if not hidden: visible.append(line)
while visible and not visible[-1].strip(): visible.pop()
if "\n".join(visible) + "\n" != shown:
    sys.exit(f"docs: README.md's example differs from {path}; copy the snippet's visible lines into the README")
print(f"docs: README.md ({sum(1 for _ in open('README.md'))} lines); its example is {path}")
PY

echo "== docs: build every snippet"
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build 2>&1 | tee "$build_log" | grep -E "error:|warning:|Build complete" || true
grep -q "Build complete" "$build_log" || { echo "docs: swift build failed" >&2; exit 1; }
# A warning shows in the log of the build that compiled the file: when
# scripts/test.sh has built everything just before (SPINDLE_DOCS_BUILD_LOG,
# that build's log), the build here found nothing to compile, and its log
# is checked too.
snippet_warnings=$(cat "$build_log" ${SPINDLE_DOCS_BUILD_LOG:+"$SPINDLE_DOCS_BUILD_LOG"} \
    | grep -E "^/.*/Snippets/.*(warning|error):" | sort -u || true)
if [[ -n $snippet_warnings ]]; then
    echo "docs: snippets must build with no warning:" >&2
    echo "$snippet_warnings" >&2
    exit 1
fi

echo "== docs: run every snippet"
bin=$(swift build --show-bin-path)
count=0
while IFS= read -r file; do
    name=$(basename "$file" .swift)
    if ! output=$(SWIFT_BACKTRACE=enable=no timeout 120 "$bin/$name" 2>&1 </dev/null); then
        echo "docs: snippet $name ($file) failed:" >&2
        echo "$output" | tail -20 >&2
        exit 1
    fi
    count=$((count + 1))
done < <(find Snippets -name '*.swift' | sort)
echo "docs: $count snippets built and ran"

if [[ ${SPINDLE_DOCS_DOCC:-1} == 0 ]]; then
    echo "docs: passed (DocC left out: SPINDLE_DOCS_DOCC=0)"
    exit 0
fi
echo "== docs: DocC for every product, warnings as errors"
# One plugin run for all of them: each run loads the package and builds
# the symbol graphs it needs anew.
targets=()
for target in Spindle SpindleCombine SpindleTesting SpindleMetrics SpindleReplay SpindleNIO SpindleAtoms; do
    targets+=(--target "$target")
done
docc_log=$(mktemp)
trap 'rm -f "$build_log" "$docc_log"' EXIT
if ! swift package generate-documentation "${targets[@]}" --warnings-as-errors >"$docc_log" 2>&1; then
    grep -E "warning|error" "$docc_log" >&2 || tail -40 "$docc_log" >&2
    echo "docs: DocC failed" >&2
    exit 1
fi
tail -7 "$docc_log"
echo "docs: passed"
