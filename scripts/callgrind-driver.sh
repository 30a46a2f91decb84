# Sourced by the footprint scripts (footprint.sh, atoms-footprint.sh):
# builds a callgrind driver and readies it for valgrind.
#
# prepare_callgrind_driver PRODUCT MODULE
#   installs valgrind and binutils when missing, builds PRODUCT (release),
#   and sets `work` (a temporary directory, removed on exit), `driver` (the
#   binary, stripped of its debug information: valgrind 3.19 cannot read
#   Swift's DWARF 5, and callgrind needs only the symbol table) and
#   `measured` (the mangled name of MODULE's `measured` function, the
#   region callgrind counts).
prepare_callgrind_driver() {
    local product=$1 module=$2
    scripts/install-deps.sh valgrind >/dev/null
    command -v objcopy >/dev/null 2>&1 || scripts/install-deps.sh binutils >/dev/null
    echo "== build (release)" >&2
    swift build -c release --product "$product" >&2
    local bin
    bin="$(swift build -c release --show-bin-path)/$product"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    driver="$work/$product"
    objcopy --strip-debug "$bin" "$driver"
    measured=$(nm "$bin" | awk -v name="${#module}${module}8measured" 'index($3, name) { print $3 }' | head -1 || true)
    [[ -n $measured ]] || { echo "$product: no 'measured' symbol in $bin" >&2; exit 1; }
}
