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
  python3 $V/tracking_report.py "$name" $N/predicted-$grid.json "$SPEED" $N/probe "$@" 2>> "${ERR:-$T}"; }
row "N xgrammar" xgrammar $N/n1-open.jsonl $N/n2-pass1.jsonl $N/n3-pass2.jsonl
row "N guidance" guidance $N/n4-guidance-open.jsonl $N/n5-guidance.jsonl
row "N 4 cores" taskset4 $N/n6-taskset4-open.jsonl $N/n7-taskset4.jsonl
# Added after the run (session_n.sh resume: the passes' four points that their 200 s steps left out, on
# a fresh server opened at 96, decided on the sweeps' point counts alone): scored by the same rule,
# summed apart from the three servers above.
T2=$(mktemp)
ERR=$T2 row "N xgrammar resume (added after the run)" xgrammar $N/n8-resume-open.jsonl $N/n9-resume.jsonl
summary() {  # summary ERRORS_FILE LABEL: the medians over the rows written to ERRORS_FILE
  python3 - "$1" "$2" <<'PY'
import json, statistics, sys
d = [json.loads(x) for x in open(sys.argv[1])]
t = [abs(e) for x in d for e in x["tracked"]]
b = [abs(e) for x in d for e in x["bench_same_points"]]
if t:
    print(f"{sys.argv[2]}: {len(t)} points, median |ITL error| {statistics.median(t):.1f}% (the tracking rule); "
          f"{statistics.median(b):.1f}% at the idle bench's speed")
PY
}
echo; summary "$T" "Primary"
cat "$T" "$T2" > "$T2.all"
[ -s "$T2" ] && summary "$T2.all" "With the resume server (added after the run)"
rm -f "$T" "$T2" "$T2.all"
