#!/bin/bash
# Session N report, written before the session (session_n.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/n/report.sh > validation/h200-vllm-0.25.1/n/score.md
set -eu
V=validation/h200-vllm-0.25.1; N=${N:-$V/n}; T=$(mktemp)   # N=DIR: a dry run on other data
SPEED=$(awk '/speed/ {print $6}' $N/bench-start.txt)
echo "| server | bench speed | points | tracked (primary) | bench, same points (secondary) | bench, all | at a grid edge | per point (conc: bench / tracked (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
row() { local name=$1 grid=$2; shift 2
  ls "$@" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py "$name" $N/predicted-$grid.json "$SPEED" $N/probe "$@" 2>> $T; }
row "N xgrammar" xgrammar $N/n1-open.jsonl $N/n2-pass1.jsonl $N/n3-pass2.jsonl
row "N guidance" guidance $N/n4-guidance-open.jsonl $N/n5-guidance.jsonl
row "N 4 cores" taskset4 $N/n6-taskset4-open.jsonl $N/n7-taskset4.jsonl
python3 - "$T" <<'PY'
import json, statistics, sys
d = [json.loads(x) for x in open(sys.argv[1])]
t = [abs(e) for x in d for e in x["tracked"]]
b = [abs(e) for x in d for e in x["bench_same_points"]]
if t:
    print(f"\nPrimary: {len(t)} points, median |ITL error| {statistics.median(t):.1f}% (the tracking rule); "
          f"secondary: {statistics.median(b):.1f}% at the idle bench's speed")
PY
rm -f "$T"
