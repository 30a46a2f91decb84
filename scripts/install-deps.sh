#!/usr/bin/env bash
# Installs what Spindle needs beyond a Swift toolchain: liburcu's headers and
# library (Debian/Ubuntu: liburcu-dev). Does nothing when already installed.
#
#   scripts/install-deps.sh [tool …]
# With arguments, also installs each named tool that is missing (spin, gcc,
# valgrind: the test stages'), in the same apt-get run. scripts/test.sh
# installs them all before its stages start, some side by side: two
# apt-gets at once would contend for dpkg's lock.
set -euo pipefail
packages=()
if ! [ -f /usr/include/urcu/wfcqueue.h ] && ! [ -f "/usr/include/$(gcc -dumpmachine 2>/dev/null)/urcu/wfcqueue.h" ] \
   && ! ls /usr/include/*/urcu/wfcqueue.h >/dev/null 2>&1; then
  packages+=(liburcu-dev)
fi
for tool in "$@"; do
  command -v "$tool" >/dev/null 2>&1 || packages+=("$tool")
done
if [ "${#packages[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "Spindle needs ${packages[*]} (liburcu >= 0.13 with its headers): install them with your system's package manager." >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "Installing ${packages[*]} ..." >&2
$SUDO apt-get update -qq </dev/null
# env, not a prefix assignment: sudo's env_reset would drop it.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null </dev/null
