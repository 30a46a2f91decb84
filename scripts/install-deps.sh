#!/usr/bin/env bash
# Installs what Spindle needs beyond a Swift toolchain: liburcu's headers and
# library (Debian/Ubuntu: liburcu-dev). Does nothing when already installed.
set -euo pipefail
if [ -f /usr/include/urcu/wfcqueue.h ] || [ -f "/usr/include/$(gcc -dumpmachine 2>/dev/null)/urcu/wfcqueue.h" ] \
   || ls /usr/include/*/urcu/wfcqueue.h >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "Spindle needs liburcu (>= 0.13) headers: install your system's liburcu development package." >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "Installing liburcu-dev ..." >&2
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburcu-dev >/dev/null
