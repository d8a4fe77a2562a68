#!/usr/bin/env bash
# The README's main job. Installs libck-dev if missing, builds ring-bench in release mode and
# runs it with the arguments given (none: the headline table, about a minute). With
# `--peers` naming go (or all) it also installs Debian's golang-go when `go` is missing and
# builds the Go peer in Benchmarks/peers/go. `scripts/bench.sh --help` explains every option.
#
# Results go to .build-results/ (git-ignored) unless `--results DIR` names another folder;
# ring-bench removes the charts of an earlier run there before writing its own. With
# `--results Benchmarks/results` (publishing a run) it also appends the run's row to
# Benchmarks/results/history.md. So a run never changes a tracked file unless asked to.
#
# `scripts/bench.sh --static-binary` instead builds a standalone ring-bench (Swift runtime,
# Foundation and Concurrency Kit linked in; it needs only glibc) at
# .build-static/release/ring-bench, for a machine without a Swift toolchain. See
# Benchmarks/README.md, "A portable binary".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

if [ "${1:-}" = "--static-binary" ]; then
  # A directory holding only libck.a makes the linker's -lck pick the static archive.
  mkdir -p .build-static/libck
  cp "$(ls /usr/lib/*-linux-gnu/libck.a | head -1)" .build-static/libck/
  swift build -c release --product ring-bench --scratch-path .build-static \
    --static-swift-stdlib -Xlinker -L.build-static/libck
  if ldd .build-static/release/ring-bench | grep -q 'libck\|libswift\|libFoundation\|libdispatch'; then
    echo "bench: the binary still links a shared Swift or ck library:" >&2
    ldd .build-static/release/ring-bench >&2
    exit 1
  fi
  echo ".build-static/release/ring-bench: standalone (needs glibc only)"
  exit 0
fi

wants_go=0
results=""
previous=""
for arg in "$@"; do
  case "$arg" in
    --peers=*|--results=*) value="${arg#*=}" ;;
    *) value="$arg" ;;
  esac
  if [ "$previous" = "--peers" ] || [[ "$arg" == --peers=* ]]; then
    if [[ ",$value," == *",go,"* || "$value" == "all" ]]; then wants_go=1; fi
  fi
  if [ "$previous" = "--results" ] || [[ "$arg" == --results=* ]]; then results="$value"; fi
  previous="$arg"
done

history=()
if [ -n "$results" ] && [ "$(realpath -m "$results")" = "$(realpath -m Benchmarks/results)" ]; then
  history=(--append-history Benchmarks/results/history.md)
fi

if [ "$wants_go" = 1 ]; then
  if ! command -v go >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    echo "bench: installing golang-go (the Go peer)" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go >/dev/null
  fi
  (cd Benchmarks/peers/go && GOFLAGS=-mod=mod go build -o ring-bench-go .)
fi

swift build -c release --product ring-bench
RING_BENCH_COMMIT="$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Package.swift Benchmarks/peers 2>/dev/null || echo '+changes')" \
  exec .build/release/ring-bench "$@" ${history[@]+"${history[@]}"}
