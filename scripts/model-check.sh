#!/usr/bin/env bash
# Model-checks the Promela models in Models/ with spin (Debian's `spin` package, installed
# here if missing, as scripts/bootstrap.sh installs libck-dev): every model exhaustively for
# its small configuration (safety: assertions + invalid end states; liveness: the LTL
# property under weak fairness), then every -DBUG_... variant, each of which must produce a
# counterexample. Prints states explored and time per run. See Models/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v spin >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "model-check: installing spin" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq spin >/dev/null
fi
CC=${CC:-gcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# check LABEL EXPECT(pass|fail) MODE(safety|ltl) MODEL [spin -D options...]
check() {
  local label=$1 expect=$2 mode=$3 model=$4
  shift 4
  local dir="$work/$label"
  mkdir -p "$dir"
  cp "Models/$model" "$dir/"
  local cflags=(-O2 -DCOLLAPSE -DMEMLIM=4000) runflags=(-m1000000)
  if [ "$mode" = safety ]; then cflags+=(-DSAFETY -DNOCLAIM); else cflags+=(-DNFAIR=4); runflags+=(-a -f); fi
  local start=$SECONDS
  ( cd "$dir" && spin -a "$@" "$model" >spin.log 2>&1 && "$CC" "${cflags[@]}" -o pan pan.c 2>cc.log ) || {
    echo "FAIL $label: spin/cc failed"; cat "$dir"/*.log; failures=$((failures + 1)); return; }
  ( cd "$dir" && ./pan "${runflags[@]}" >pan.out 2>&1 ) || true
  local out="$dir/pan.out" errors states what
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | head -1)
  what=$(grep -m1 -E "assertion violated|acceptance cycle|invalid end state \(" "$out" | sed 's/^pan:[0-9]*: *//' || true)
  if grep -q -E "max search depth too small|reached -DMEMLIM bound|out of memory" "$out"; then
    echo "FAIL $label: search not exhaustive"; grep -E "depth too small|MEMLIM|memory" "$out"; failures=$((failures + 1)); return
  fi
  local seconds=$((SECONDS - start))
  if [ "$expect" = pass ] && [ "${errors:-1}" = 0 ]; then
    printf 'ok   %-44s %s: %11s states, %3ss, 0 errors\n' "$label" "$mode" "$states" "$seconds"
  elif [ "$expect" = fail ] && [ "${errors:-0}" != 0 ]; then
    printf 'ok   %-44s %s: counterexample after %s states, %ss: %s\n' "$label" "$mode" "$states" "$seconds" "$what"
  else
    echo "FAIL $label ($mode, expected $expect): errors ${errors:-?}"; tail -n 30 "$out"; failures=$((failures + 1))
  fi
}

echo "== mailbox.pml (MPSCQueue idle-flag hand-off, ring claim and mark publish, overflow, quiescence, close)"
# 3 producers sending 3+1+1 messages into a ring of 4 (3 usable): the overflow path is taken.
check mailbox-3p-3.1.1-ring4 pass safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=3
check mailbox-3p-2.1.1-ring4-close pass safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DCLOSE
check mailbox-3p-2.1.1-ring4-ltl pass ltl mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2
check mailbox-BUG_NO_RECHECK fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_NO_RECHECK
check mailbox-BUG_NO_RECHECK-ltl fail ltl mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_NO_RECHECK -DNO_END_CHECK
check mailbox-BUG_STORE_LOAD_REORDER fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_STORE_LOAD_REORDER
check mailbox-BUG_STORE_LOAD_REORDER-ltl fail ltl mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_STORE_LOAD_REORDER -DNO_END_CHECK
check mailbox-BUG_NO_QUIESCENCE fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=3 -DBUG_NO_QUIESCENCE
check mailbox-BUG_NO_CAS fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_NO_CAS
check mailbox-BUG_SET_NO_FENCE fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=3 -DBUG_SET_NO_FENCE
check mailbox-BUG_SET_NO_FENCE-ltl fail ltl mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_SET_NO_FENCE -DNO_END_CHECK
check mailbox-BUG_MARK_ANY_LAP fail safety mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DBUG_MARK_ANY_LAP
# A producer parked for good between its claim and its publish, and 2 x 2 besides it into
# a ring of 4: every other producer completes its sends (NOWAIT); not so with in-order commits.
check mailbox-2p-2.2-ring4-parked pass safety mailbox.pml -DNPROD=2 -DNMSG=2 -DPARKED
check mailbox-BUG_IN_ORDER_COMMIT-parked fail safety mailbox.pml -DNPROD=2 -DNMSG=2 -DPARKED -DBUG_IN_ORDER_COMMIT

echo "== unit_mailbox.pml (the unit as the idle flag: one state-word load per send, T1/T2, runDry, T4/T5)"
# 3 producers sending 2+1+1 into a ring of 4 (3 usable: the overflow path is taken); 2 x 2
# into a ring of 2 (1 usable: a claimed slot, then the producer's next message overflows,
# which BUG_NO_QUIESCENCE needs); with close; liveness with 1+2 into a ring of 2.
check unitmb-3p-2.1.1-ring4 pass safety unit_mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DCAP=4
check unitmb-2p-2.2-ring2 pass safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DCAP=2
check unitmb-3p-1.1.1-ring2-close pass safety unit_mailbox.pml -DNPROD=3 -DNMSG=1 -DCAP=2 -DCLOSE
check unitmb-2p-1.2-ring2-ltl pass ltl unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=2
# runDry as it was, with its own overflowActive test (the code leaves it out)
check unitmb-2p-2.2-ring2-drytest pass safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DCAP=2 -DDRY_TESTS_OVERFLOW
for bug in BUG_SKIP_RUNNING BUG_IDLE_ON_CLAIM BUG_STALE_LOAD BUG_SET_NO_FENCE; do
  check "unitmb-$bug" fail safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=2 "-D$bug"
  check "unitmb-$bug-ltl" fail ltl unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=2 "-D$bug" -DNO_END_CHECK
done
check unitmb-BUG_NO_QUIESCENCE fail safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DCAP=2 -DBUG_NO_QUIESCENCE
check unitmb-BUG_MARK_ANY_LAP fail safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DCAP=2 -DBUG_MARK_ANY_LAP
# A parked producer and 1+2 besides it into a ring of 4 (3 usable: a ring of 2 leaves no
# slot behind the parked one).
check unitmb-2p-1.2-ring4-parked pass safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=4 -DPARKED
check unitmb-BUG_IN_ORDER_COMMIT-parked fail safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=4 -DPARKED -DBUG_IN_ORDER_COMMIT
# The first slot: the first item kept in the queue, a ring only for a second.
check unitmb-3p-2.1.1-ring4-slot pass safety unit_mailbox.pml -DNPROD=3 -DNMSG=1 -DNMSG1=2 -DCAP=4 -DFIRST_SLOT
check unitmb-2p-2.2-ring2-slot pass safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DCAP=2 -DFIRST_SLOT
check unitmb-2p-1.2-ring2-slot-ltl pass ltl unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=2 -DFIRST_SLOT
check unitmb-1p-1-slot pass safety unit_mailbox.pml -DNPROD=1 -DNMSG=1 -DCAP=2 -DFIRST_SLOT
check unitmb-BUG_SLOT_NO_FENCE fail safety unit_mailbox.pml -DNPROD=1 -DNMSG=1 -DCAP=2 -DFIRST_SLOT -DBUG_SLOT_NO_FENCE
check unitmb-BUG_SLOT_NOT_HEAD fail safety unit_mailbox.pml -DNPROD=2 -DNMSG=2 -DNMSG1=1 -DCAP=2 -DFIRST_SLOT -DBUG_SLOT_NOT_HEAD

echo "== ring_reclaim.pml (MPSCQueue giving its ring back and growing it: seal, detach or swap under the lock, stale producers, re-install, grace period)"
# 2 producers sending 2 each into rings of 2 slots (1 usable: every other send overflows),
# up to 3 rings in a run (2 give-backs), drain budget 1; and 3 producers sending 1 each.
check reclaim-2p-2-ring2-3gen pass safety ring_reclaim.pml
check reclaim-3p-1-ring2-3gen pass safety ring_reclaim.pml -DNPROD=3 -DNMSG=1
check reclaim-2p-2-ring2-3gen-ltl pass ltl ring_reclaim.pml
check reclaim-BUG_NO_SEAL fail safety ring_reclaim.pml -DBUG_NO_SEAL
check reclaim-BUG_STALE_UNDER_LOCK fail safety ring_reclaim.pml -DBUG_STALE_UNDER_LOCK
check reclaim-BUG_NO_SECOND_LOOK fail safety ring_reclaim.pml -DBUG_NO_SECOND_LOOK
check reclaim-BUG_NO_SECOND_LOOK-ltl fail ltl ring_reclaim.pml -DBUG_NO_SECOND_LOOK -DNO_END_CHECK
check reclaim-BUG_MARK_ANY_LAP fail safety ring_reclaim.pml -DBUG_MARK_ANY_LAP
check reclaim-2p-2-ring2-3gen-nogrow pass safety ring_reclaim.pml -DNO_GROW
check reclaim-BUG_GROW_NO_SEAL fail safety ring_reclaim.pml -DBUG_GROW_NO_SEAL

echo "== scheduled_unit.pml (a unit's state word (UnitHeader), owner bit and retains, scheduler, shutdown and after-close path)"
# With an owner that leaves at any moment (2 producers: 3 take ~5 minutes, run by hand, see
# Models/README.md); without one (-DNO_OWNER: executors' lanes) with 3 producers.
check unit-2p-2w-owner pass safety scheduled_unit.pml -DNPROD=2 -DNW=2
check unit-3p-2w-no-owner pass safety scheduled_unit.pml -DNPROD=3 -DNW=2 -DNO_OWNER
check unit-2p-2w-ltl pass ltl scheduled_unit.pml -DNPROD=2 -DNW=2
check unit-BUG_NO_NOTIFY fail safety scheduled_unit.pml -DNPROD=2 -DBUG_NO_NOTIFY
check unit-BUG_NO_NOTIFY-ltl fail ltl scheduled_unit.pml -DNPROD=2 -DBUG_NO_NOTIFY -DNO_END_CHECK
check unit-BUG_T4_STORE fail safety scheduled_unit.pml -DNPROD=2 -DBUG_T4_STORE
check unit-BUG_NO_SETTLE fail safety scheduled_unit.pml -DNPROD=2 -DBUG_NO_SETTLE
check unit-BUG_NO_SETTLE-ltl fail ltl scheduled_unit.pml -DNPROD=2 -DBUG_NO_SETTLE -DNO_END_CHECK
check unit-BUG_NO_CLOSE_DRAIN fail safety scheduled_unit.pml -DNPROD=2 -DBUG_NO_CLOSE_DRAIN
check unit-BUG_OWNER_BLIND_RELEASE fail safety scheduled_unit.pml -DNPROD=2 -DBUG_OWNER_BLIND_RELEASE
check unit-BUG_T4_IGNORES_O fail safety scheduled_unit.pml -DNPROD=2 -DBUG_T4_IGNORES_O
check unit-BUG_T1_NO_RETAIN fail safety scheduled_unit.pml -DNPROD=2 -DBUG_T1_NO_RETAIN

if [ "$failures" -ne 0 ]; then
  echo "model-check: $failures check(s) failed" >&2
  exit 1
fi
echo "model-check: all models verified; every bug variant produced a counterexample"
