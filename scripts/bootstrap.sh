#!/usr/bin/env bash
# Installs what FastMailbox needs besides the Swift toolchain: Concurrency Kit. Idempotent
# and quiet when it is already there. Knows apt (Debian, Ubuntu: libck-dev), dnf (Fedora
# and relatives: ck-devel) and Homebrew (macOS: concurrencykit); anywhere else it prints
# what to install and how to point the build at it, and fails.
set -euo pipefail

have_ck() {
  if command -v brew >/dev/null 2>&1 && [ "$(uname -s)" = Darwin ]; then
    brew list --versions concurrencykit >/dev/null 2>&1 && return 0
  fi
  for dir in /usr/include /usr/local/include; do
    [ -f "$dir/ck_ring.h" ] || continue
    for lib in /usr/lib /usr/lib64 /usr/local/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
      [ -e "$lib/libck.so" ] && return 0
    done
    ldconfig -p 2>/dev/null | grep -q 'libck\.so' && return 0
  done
  return 1
}
have_ck && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: installing libck-dev (Concurrency Kit) with apt" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libck-dev >/dev/null
elif command -v dnf >/dev/null 2>&1; then
  echo "bootstrap: installing ck-devel (Concurrency Kit) with dnf" >&2
  $SUDO dnf install -y -q ck-devel
elif command -v brew >/dev/null 2>&1; then
  echo "bootstrap: installing concurrencykit with Homebrew" >&2
  brew install concurrencykit
else
  cat >&2 <<'EOF'
bootstrap: no apt, dnf or Homebrew here; install Concurrency Kit (0.7 or later) yourself:
  from your system's packages (FreeBSD: `pkg install concurrencykit`),
  or from source:
    git clone https://github.com/concurrencykit/ck && cd ck
    ./configure --prefix=/usr/local && make && sudo make install
then, if it is not under /usr or /usr/local, point the build at it (README, "Platforms"):
    swift build -Xcc -I<prefix>/include -Xlinker -L<prefix>/lib -Xlinker -rpath -Xlinker <prefix>/lib
  or through pkg-config:
    PKG_CONFIG_PATH=<prefix>/lib/pkgconfig FASTMAILBOX_CK_PKGCONFIG=ck swift build
EOF
  exit 1
fi
have_ck || { echo "bootstrap: Concurrency Kit installed, but ck_ring.h or libck was not found where expected; see the README, \"Platforms\"" >&2; }
