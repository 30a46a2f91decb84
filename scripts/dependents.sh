#!/usr/bin/env bash
# What a package that depends on Spindle resolves, fetches and builds.
#
# Every package this one uses besides swift-atomics and swift-log is behind a
# trait (Package.swift): SpindleNIO, SpindleMetrics, SpindleCombine,
# Benchmarks, all on by default. This script makes scratch packages that
# depend on this checkout by path and checks:
#
# 1. `traits: []`, the `Spindle` product: the package manager fetches
#    swift-atomics and swift-log and nothing else, and the dependent builds.
# 2. The same dependent using `SpindleNIO` with its trait off: the build
#    stops with SpindleNIO's own #error, which names the trait to turn on.
#    And a spin written renderer first, reducer last, with no types named
#    (the inference trap; see SpinBuilder): the build stops with the
#    builder's message, which says how to write it.
# 3. `traits: ["SpindleNIO"]`, the `SpindleNIO` product: swift-nio and what
#    it needs are fetched, and nothing for the other products.
# 4. No traits named (the defaults): what this package itself uses.
#
# Usage: scripts/dependents.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
name=$(basename "$root")   # a path dependency's identity: its folder's name
scripts/install-deps.sh >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# manifest TRAITS TARGETS: a scratch package's manifest.
manifest() {
    cat <<EOF
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "Dependent",
    dependencies: [.package(path: "$root"$1)],
    targets: [$2]
)
EOF
}
target() {  # target NAME PRODUCT
    echo ".target(name: \"$1\", dependencies: [.product(name: \"$2\", package: \"$name\")]),"
}
# checkouts DIR: the packages resolved into DIR, one line, sorted.
checkouts() { ls "$1/.build/checkouts" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }
expect_checkouts() {  # expect_checkouts DIR "EXPECTED" WHAT
    local got
    got=$(checkouts "$1")
    if [[ $got != "$2" ]]; then
        echo "dependents: $3 fetched [$got], expected [$2]" >&2
        exit 1
    fi
    echo "dependents: $3 fetches: ${got:-nothing}"
}

# expect_build_error TARGET PATTERN WHAT: building TARGET of the lean
# dependent must fail, with an error matching PATTERN (grep -E).
expect_build_error() {
    local log="$work/$1.log"
    if (cd "$lean" && swift build --target "$1" >"$log" 2>&1); then
        echo "dependents: $3 built; it must stop with an error matching: $2" >&2
        exit 1
    fi
    if ! grep -qE "$2" "$log"; then
        echo "dependents: $3 failed without an error matching: $2" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    echo "dependents: $3 stops with: $(grep -oE "$2" "$log" | head -1)"
}

# expect_build_warnings TARGET WHAT MESSAGE...: building TARGET of the lean
# dependent must succeed, warning with each MESSAGE (grep -F): a deprecated
# spelling that still compiles and names its replacement.
expect_build_warnings() {
    local target=$1 what=$2 log="$work/$1.log"
    shift 2
    if ! (cd "$lean" && swift build --target "$target" >"$log" 2>&1); then
        echo "dependents: $what did not build" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    local message
    for message in "$@"; do
        if ! grep -qF "$message" "$log"; then
            echo "dependents: $what built without the warning: $message" >&2
            exit 1
        fi
    done
    echo "dependents: $what: built, deprecated, each warning naming its replacement"
}

echo "== 1. traits: [], the Spindle product"
lean="$work/lean"
mkdir -p "$lean/Sources/UsesSpindle"
echo 'import Spindle
public let spin = Spin(initialState: 0) {
    Reducer { (count: Int, step: Int) in count + step }
}' \
    > "$lean/Sources/UsesSpindle/UsesSpindle.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle)" > "$lean/Package.swift"
(cd "$lean" && swift package resolve >/dev/null)
expect_checkouts "$lean" "swift-atomics swift-log" "a dependent of Spindle with traits: []"
(cd "$lean" && swift build --target UsesSpindle 2>&1 | tail -1)

echo "== 2. the same dependent using SpindleNIO with its trait off"
mkdir -p "$lean/Sources/UsesNIO"
echo 'import SpindleNIO' > "$lean/Sources/UsesNIO/UsesNIO.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle) $(target UsesNIO SpindleNIO)" > "$lean/Package.swift"
expect_build_error UsesNIO "SpindleNIO needs swift-nio[^:]*" "SpindleNIO with its trait off"

echo "== 2b. a renderer first, the reducer last, no types named"
mkdir -p "$lean/Sources/RendererFirst"
echo 'import Spindle
enum Step: Sendable { case up }
public let spin = Spin(initialState: 0) {
    Feedback { (count: Int) in print(count) }
    Reducer { (count: Int, step: Step) in count + 1 }
}' > "$lean/Sources/RendererFirst/RendererFirst.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle) $(target RendererFirst Spindle)" > "$lean/Package.swift"
expect_build_error RendererFirst "'buildExpression' is unavailable: .*put the reducer first in the block" \
    "a renderer-first spin with no types named"

echo "== 2c. Spin.Swift's executeOn: (Spindle chooses the executor at start)"
mkdir -p "$lean/Sources/ExecuteOn"
echo 'import Dispatch
import Spindle
public let spin = Spin(initialState: 0, executeOn: .main) {
    Reducer { (count: Int, step: Int) in count + step }
}' > "$lean/Sources/ExecuteOn/ExecuteOn.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle) $(target ExecuteOn Spindle)" > "$lean/Package.swift"
expect_build_error ExecuteOn "is unavailable: choose where the loop runs when it starts: [^\"]*" \
    "Spin.Swift's Spin(initialState:executeOn:)"

echo "== 2d. Spin.Swift's gear spelling (propagating: both ways) builds, deprecated"
mkdir -p "$lean/Sources/GearPropagating"
echo 'import Spindle
let gear = Gear<String>()
public let spin = Spin<Int, Int>(initialState: 0) {
    Feedback(attachedTo: gear, propagating: { (word: String) -> Int? in word.count })
    Feedback(attachedTo: gear, propagating: { (count: Int) -> String? in String(count) })
    Reducer { count, step in count + step }
}' > "$lean/Sources/GearPropagating/GearPropagating.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle) $(target GearPropagating Spindle)" > "$lean/Package.swift"
expect_build_warnings GearPropagating "Spin.Swift's gear spelling" \
    "say the direction: fromGear: (gear → loop)" "say the direction: toGear: (state → gear)"

echo "== 2e. Spin.Swift's dependency forms (dep1: … dep5:) build, deprecated"
mkdir -p "$lean/Sources/DependencyForms"
echo 'import Spindle
@Sendable func step(_ size: Int, _ count: Int) -> Int? { count < size ? size : nil }
@Sendable func pace(_ size: Int, _ limit: Int, _ count: Int) async -> Int? { count < limit ? size : nil }
public let spin = Spin<Int, Int>(initialState: 0) {
    Feedback(effect: step, dep1: 1)
    Feedback(effect: pace, dep1: 1, dep2: 5)
    Reducer { count, step in count + step }
}' > "$lean/Sources/DependencyForms/DependencyForms.swift"
manifest ", traits: []" "$(target UsesSpindle Spindle) $(target DependencyForms Spindle)" > "$lean/Package.swift"
expect_build_warnings DependencyForms "Spin.Swift's dependency forms" \
    "capture the dependencies in the effect's closure: Feedback(effect: { effect(dep1, \$0) })" \
    "capture the dependencies in the effect's closure: Feedback(effect: { effect(dep1, dep2, \$0) })"

echo "== 3. traits: [\"SpindleNIO\"], the SpindleNIO product"
nio="$work/nio"
mkdir -p "$nio/Sources/UsesNIO"
echo 'import SpindleNIO' > "$nio/Sources/UsesNIO/UsesNIO.swift"
manifest ", traits: [\"SpindleNIO\"]" "$(target UsesNIO SpindleNIO)" > "$nio/Package.swift"
(cd "$nio" && swift package resolve >/dev/null)
expect_checkouts "$nio" "swift-atomics swift-collections swift-log swift-nio swift-system" \
    "a dependent of SpindleNIO with traits: [\"SpindleNIO\"]"

echo "== 4. no traits named (the defaults)"
all="$work/all"
mkdir -p "$all/Sources/UsesSpindle"
cp "$lean/Sources/UsesSpindle/UsesSpindle.swift" "$all/Sources/UsesSpindle/"
manifest "" "$(target UsesSpindle Spindle)" > "$all/Package.swift"
(cd "$all" && swift package resolve >/dev/null)
echo "dependents: a dependent naming no traits fetches: $(checkouts "$all")"
