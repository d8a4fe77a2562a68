#!/usr/bin/env bash
# The README's test command: installs libck-dev if missing, then runs every test four
# times: in debug, under ThreadSanitizer (with the ck_ring annotations compiled in), under
# AddressSanitizer with LeakSanitizer (0 errors and 0 leaks required), and optimised
# (release with testing enabled: only there does the optimiser specialise an actor's
# own turn, which its unit header then keeps as code; tests that arm a test hook, which
# release builds compile out, are left out of that build). Each time the
# unit targets run first, in parallel; then the stress targets (stress, soak, fault
# injection, whole-process measurements) run alone, one test at a time (--no-parallel):
# they load both cores on purpose, and timing-sensitive tests must not run beside them.
# FASTMAILBOX_SOAK_SECONDS sets the soak's length (SoakTests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# The stress targets' tests (a --filter / --skip pattern on "<target>.<suite>").
stress='^(FastMailboxStressTests|MNSchedulerStressTests)\.'
run_tests() {  # extra `swift build` / `swift test` arguments (scratch path, sanitizer)
  swift build --build-tests "$@"
  echo "-- unit targets, in parallel"
  swift test --skip-build --parallel --skip "$stress" "$@"
  echo "-- stress targets, one test at a time"
  swift test --skip-build --no-parallel --filter "$stress" "$@"
}
echo "== swift test (all suites)"
run_tests
echo "== swift test under ThreadSanitizer (every suite; stress tests scale down under TSan)"
run_tests --scratch-path .build-tsan --sanitize=thread -Xcc -DCKSHIM_TSAN=1 2>&1 | tee .build-tsan.log
if grep -q "WARNING: ThreadSanitizer" .build-tsan.log; then
  echo "ThreadSanitizer reported races (see above)" >&2
  exit 1
fi
echo "ThreadSanitizer: 0 races reported"
echo "== swift test under AddressSanitizer + LeakSanitizer"
# LeakSanitizer reports at process exit and then makes the exit code non-zero; the log is
# checked as well, so a report can never pass unnoticed.
set +e
(
  set -eo pipefail
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  run_tests --scratch-path .build-asan --sanitize=address
) > .build-asan.log 2>&1
status=$?
set -e
tail -n 3 .build-asan.log
if [ $status -ne 0 ] || grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" .build-asan.log; then
  grep -B2 -A40 "ERROR: \(Address\|Leak\)Sanitizer" .build-asan.log | head -200 >&2 || true
  echo "AddressSanitizer/LeakSanitizer reported errors or leaks, or a test failed (exit $status; see .build-asan.log)" >&2
  exit 1
fi
echo "AddressSanitizer + LeakSanitizer: 0 errors, 0 leaks"
echo "== swift test, optimised (release, testing enabled)"
run_tests -c release -Xswiftc -enable-testing --scratch-path .build-release-tests
