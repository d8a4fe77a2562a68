#!/usr/bin/env bash
# Where fan-in's time goes, per worker and over the run: samples one FastMailbox fan-in
# run with `perf record -e cpu-clock` and splits each pool worker's samples into equal
# time buckets, each counted as
#   send  a sender's turn (ActorCellBase.deliver*, the sender's closure),
#   spin  the overflow lock's wait (MPSCQueue.lockOverflowContended),
#   sink  the receiver's turn (its specialised pass, its closure, OrderCheck.receive),
#   other everything else (kernel page faults, malloc, the scheduler's loop).
# A worker with no samples in a bucket was parked (or preempted). cpu-clock only: hardware
# counters do not work on this machine. The symbol patterns are ring-bench's fan-in's.
#
#   scripts/fanin-phases.sh [--binary PATH] [--workers N] [--producers P] [--buckets B]
#   (defaults: .build/release/ring-bench, 2, 16, 12)
set -euo pipefail
binary=.build/release/ring-bench
workers=2
producers=16
buckets=12
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --producers) producers=$2; shift 2 ;;
        --buckets) buckets=$2; shift 2 ;;
        *) echo "usage: $0 [--binary PATH] [--workers N] [--producers P] [--buckets B]" >&2; exit 2 ;;
    esac
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
perf record -q -F 10000 -e cpu-clock -o "$scratch/perf.data" "$binary" --workload fanin --suite full \
    --workers "$workers" --peers fastmailbox --producers "$producers" --repeat 1 --results "$scratch/results" \
    | grep -E "^\| P=$producers \| $workers \| [0-9.]+ \|$" | head -1 | sed 's/^/rate (M msgs\/s): /'
perf script -i "$scratch/perf.data" -F comm,time,ip,sym 2>/dev/null | awk -v nb="$buckets" '
    $1 ~ /^mn-worker-/ {
        t = $2; sub(/:$/, "", t); sym = $4
        if (sym ~ /lockOverflowContended/) c = "spin"
        else if (sym ~ /deliver/ || sym ~ /FanInWorkload.*8ActorRefVySiG/) c = "send"
        else if (sym ~ /specializedB4Pass/ || sym ~ /OrderCheck.*receive/ || sym ~ /FanInWorkload.*MessageV_11FastMailbox12ActorContext/) c = "sink"
        else c = "other"
        n++; time[n] = t; worker[n] = substr($1, 11); class[n] = c
        if (n == 1 || t < t0) t0 = t
        if (n == 1 || t > t1) t1 = t
        seen[substr($1, 11)] = 1
    }
    END {
        if (n == 0) { print "no worker samples"; exit 1 }
        width = (t1 - t0) / nb
        for (i = 1; i <= n; i++) {
            b = int((time[i] - t0) / width); if (b >= nb) b = nb - 1
            count[b, worker[i], class[i]]++
        }
        printf "span %.1f ms, %d buckets of %.1f ms; per worker: send spin sink other\n", (t1 - t0) * 1000, nb, width * 1000
        for (b = 0; b < nb; b++) {
            line = sprintf("%2d", b)
            for (w = 0; (w in seen); w++)
                line = line sprintf(" | w%d %4d %4d %4d %4d", w, count[b, w, "send"], count[b, w, "spin"],
                                    count[b, w, "sink"], count[b, w, "other"])
            print line
        }
    }'
