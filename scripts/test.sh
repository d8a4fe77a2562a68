#!/usr/bin/env bash
# The README's test command: installs libck-dev if missing, runs the whole suite, then the
# whole suite again under ThreadSanitizer (with the ck_ring annotations compiled in).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# --no-parallel: suites run one after another. The stress suites saturate both cores on
# purpose (16 producer threads); timing-sensitive suites must not run underneath them.
echo "== swift test (all suites)"
swift test --no-parallel
echo "== swift test under ThreadSanitizer (every suite; stress tests scale down under TSan)"
swift test --no-parallel --scratch-path .build-tsan --sanitize=thread -Xcc -DCKSHIM_TSAN=1 2>&1 | tee .build-tsan.log
if grep -q "WARNING: ThreadSanitizer" .build-tsan.log; then
  echo "ThreadSanitizer reported races (see above)" >&2
  exit 1
fi
echo "ThreadSanitizer: 0 races reported"
