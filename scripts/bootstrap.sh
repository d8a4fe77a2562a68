#!/usr/bin/env bash
# Installs what FastMailbox needs on a fresh Debian-like machine with the Swift toolchain:
# Concurrency Kit (libck-dev). Idempotent and quiet when it is already there.
set -euo pipefail
if [ -f /usr/include/ck_ring.h ] && { [ -e /usr/lib/x86_64-linux-gnu/libck.so ] || [ -e /usr/lib/aarch64-linux-gnu/libck.so ] || ldconfig -p 2>/dev/null | grep -q 'libck\.so'; }; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "bootstrap: installing libck-dev (Concurrency Kit)" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libck-dev >/dev/null
