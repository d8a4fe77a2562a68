#!/usr/bin/env bash
# Instructions per message on the hot path, counted by callgrind: equal from run to run
# while nothing else loads the machine (other load changes how the two threads interleave,
# and with it the spins and parks counted). For each workload of instruction-probe,
# at MN_WORKERS=1, two run lengths; (instructions(long) − instructions(short)) / extra
# messages is the figure, so start-up and shutdown's fixed cost cancel out (not its cost
# per actor where actors are spawned per n: spawn, spawnactor; see --timed). The same
# difference, per symbol, gives the top symbols per message. MN_IDLE_MAILBOX_RECLAIM_MS=0:
# the idle-mailbox walk runs on a timer, once a second, and under callgrind (about 50 times
# slower) the longer run would count ~50 times more walks per message than a real run
# does; ring-bench spawn reports the walk's cost per actor instead (reclaim_walk_ns_per_actor).
# MN_BLOCKING_THRESHOLD_MS=0 for the same reason: a turn runs so much slower under callgrind
# that the blocking monitor would take some for blocked, at times that vary from run to run,
# and the counts with them.
# PROBE=path: a prebuilt instruction-probe (default: built here, release).
# --timed: count only up to ActorSystem.shutdown (callgrind's --dump-before on its symbol,
# the first dump): shutdown's cost per actor (spawn, spawnactor: stopping and freeing each
# actor) is then left out, everything else as above.
#
#   scripts/instructions.sh [--out FILE] [--timed] [--check THRESHOLDS] [workload …]
#     (default: all of them; FILE default Benchmarks/results/instructions.md)
# --check THRESHOLDS: the instruction gate (.ci/run): exits 1 when a measured workload's
# instructions per message exceed its figure in THRESHOLDS (JSON: workload → instructions)
# by more than 3 %.
# ask, mnactor, mnfloor (the Swift runtime's share of mnactor), swiftactor, swiftactorpool (a
# default actor called from a task on the pool) and swiftactorpoolfloor (the runtime's share
# of that) count an awaited call (a round trip) instead of a message;
# mntell counts one MNActor.tell (a message); spawn and spawnactor (spawned from an actor's
# turns) count an actor (its spawn, first tell, first turn and going idle, plus its share of
# shutdown — stopping and freeing it, about 2,300 instructions — unless --timed).
set -euo pipefail
cd "$(dirname "$0")/.."
out=Benchmarks/results/instructions.md
timed=()
part=""
check=""
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --timed)
      timed=(--dump-before='$s11FastMailbox11ActorSystemC8shutdown7timeoutAA14ShutdownReportVs8DurationV_tF')
      part=.1
      shift ;;
    *) break ;;
  esac
done
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(pingpong threadring fanin faninactor faninclass faninvalue pool mailbox mailboxring sequential spawn spawnactor ask mnactor mnfloor swiftactor swiftactorpool swiftactorpoolfloor mntell)
scripts/bootstrap.sh
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
swift build -c release --product instruction-probe >/dev/null
probe=${PROBE:-.build/release/instruction-probe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# messages per unit of n: ping-pong and sequential send 2 per round (spawn, spawnactor: per actor)
per_n() { case $1 in pingpong|sequential|mntell) echo 2 ;; *) echo 1 ;; esac; }
short_n() { case $1 in sequential|spawn|spawnactor) echo 20000 ;; *) echo 50000 ;; esac; }

{
  echo "# Instructions per message"
  echo
  echo "\`scripts/instructions.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'),"
  echo "$(uname -m), $(swift --version 2>&1 | head -1 | sed 's/ (.*//'). callgrind, MN_WORKERS=1: (Ir(2n) − Ir(n)) / extra messages${part:+, up to ActorSystem.shutdown (--timed)}."
  echo
  echo "| workload | n | instructions / message |"
  echo "|---|---:|---:|"
} > "$tmp/head.md"
: > "$tmp/tops.md"

for w in "${workloads[@]}"; do
  n=$(short_n "$w")
  for len in "$n" "$((2 * n))"; do
    MN_WORKERS=1 MN_IDLE_MAILBOX_RECLAIM_MS=0 MN_BLOCKING_THRESHOLD_MS=0 valgrind --tool=callgrind "${timed[@]}" --callgrind-out-file="$tmp/$w.$len" "$probe" "$w" "$len" >/dev/null 2>"$tmp/$w.$len.log" \
      || { cat "$tmp/$w.$len.log" >&2; echo "instructions: $w $len failed" >&2; exit 1; }
    [ -z "$part" ] || [ -f "$tmp/$w.$len$part" ] || { echo "instructions: $w $len: no dump before shutdown (symbol renamed?)" >&2; exit 1; }
    callgrind_annotate --threshold=100 "$tmp/$w.$len$part" 2>/dev/null > "$tmp/$w.$len.txt"
  done
  extra=$(( n * $(per_n "$w") ))
  python3 - "$w" "$n" "$extra" "$tmp/$w.$n.txt" "$tmp/$w.$((2 * n)).txt" "$tmp" <<'PY'
import re, sys, os
w, n, extra, a, b, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
def parse(path):
    total, syms = 0, {}
    for line in open(path):
        m = re.match(r'\s*([\d,]+)\s+\([^)]*\)\s+(PROGRAM TOTALS|(\S+?):(\S+))', line)
        if not m: continue
        v = int(m.group(1).replace(',', ''))
        if m.group(2) == 'PROGRAM TOTALS': total = v; continue
        sym = m.group(4)
        syms[sym] = syms.get(sym, 0) + v
    return total, syms
ta, sa = parse(a); tb, sb = parse(b)
per = (tb - ta) / extra
with open(os.path.join(tmp, 'head.md'), 'a') as f:
    f.write(f"| {w} | {n} | {per:,.0f} |\n")
with open(os.path.join(tmp, 'measured.tsv'), 'a') as f:
    f.write(f"{w}\t{per:.1f}\n")
def demangle(names):
    import subprocess
    try:
        out = subprocess.run(['swift', 'demangle', '--simplified'], input='\n'.join(names), capture_output=True, text=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except Exception:
        return names
diffs = sorted(((sb.get(s, 0) - sa.get(s, 0)) / extra, s) for s in set(sa) | set(sb))
diffs.reverse()
top = [d for d in diffs if d[0] >= 1][:15]
names = demangle([s for _, s in top])
with open(os.path.join(tmp, 'tops.md'), 'a') as f:
    f.write(f"\n## {w}: top symbols (instructions per message)\n\n| per message | symbol |\n|---:|---|\n")
    for (v, _), name in zip(top, names):
        f.write(f"| {v:,.1f} | `{name[:140]}` |\n")
print(f"{w}: {per:,.0f} instructions/message")
PY
done
mkdir -p "$(dirname "$out")"
cat "$tmp/head.md" "$tmp/tops.md" > "$out"
cat "$tmp/head.md"
echo "(top symbols in $out)"
[ -z "$check" ] && exit 0
# The gate: every measured workload that has a threshold must stay within 3 % of it.
python3 - "$check" "$tmp/measured.tsv" <<'PY'
import json, sys
thresholds = json.load(open(sys.argv[1]))
failed = []
print("| workload | instructions / message | threshold | limit (+3 %) | result |")
print("|---|---:|---:|---:|---|")
for line in open(sys.argv[2]):
    w, per = line.split("\t"); per = float(per)
    if w not in thresholds:
        print(f"| {w} | {per:,.0f} | – | – | no threshold |"); continue
    limit = thresholds[w] * 1.03
    ok = per <= limit
    if not ok: failed.append(w)
    print(f"| {w} | {per:,.0f} | {thresholds[w]:,} | {limit:,.0f} | {'ok' if ok else 'REGRESSION'} |")
if failed:
    print(f"instructions: {', '.join(failed)} rose more than 3 % over {sys.argv[1]}", file=sys.stderr)
    sys.exit(1)
PY
