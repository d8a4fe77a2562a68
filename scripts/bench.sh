#!/usr/bin/env bash
# The README's main job: installs libck-dev if missing, builds ring-bench in release mode and
# runs it; results (Markdown, CSV, SVG charts) go to Benchmarks/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
swift build -c release --product ring-bench
exec .build/release/ring-bench "$@"
