#!/usr/bin/env bash
# The README's test command: installs libck-dev if missing, runs the whole suite, then the
# whole suite again under ThreadSanitizer (with the ck_ring annotations compiled in), then
# under AddressSanitizer with LeakSanitizer (0 errors and 0 leaks required).
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
echo "== swift test under AddressSanitizer + LeakSanitizer"
# LeakSanitizer reports at process exit and then makes the exit code non-zero; the log is
# checked as well, so a report can never pass unnoticed.
set +e
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0" \
  swift test --no-parallel --scratch-path .build-asan --sanitize=address > .build-asan.log 2>&1
status=$?
set -e
tail -n 3 .build-asan.log
if [ $status -ne 0 ] || grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" .build-asan.log; then
  grep -B2 -A40 "ERROR: \(Address\|Leak\)Sanitizer" .build-asan.log | head -200 >&2 || true
  echo "AddressSanitizer/LeakSanitizer reported errors or leaks, or a test failed (exit $status; see .build-asan.log)" >&2
  exit 1
fi
echo "AddressSanitizer + LeakSanitizer: 0 errors, 0 leaks"
