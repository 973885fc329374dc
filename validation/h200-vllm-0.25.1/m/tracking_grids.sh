#!/bin/bash
# The tracking rule read from session M's committed grids (the default before M, ij), post hoc:
# ../tracking_report.py per server. usage: bash validation/h200-vllm-0.25.1/m/tracking_grids.sh > validation/h200-vllm-0.25.1/m/tracking-grids.md
set -eu
V=validation/h200-vllm-0.25.1; M=$V/m; T=$(mktemp)
S1=$(awk '/speed/ {print $6}' $M/bench-start.txt); S2=$(awk '/speed/ {print $6}' $M/bench-fresh.txt)
echo "| server | bench speed | points | tracked | bench, same points | bench, all | at a grid edge | per point (conc: bench / tracked (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
for x in "M1 xgrammar $S1 m1-xgrammar" "M1b xgrammar $S1 m5-xgrammar-2" "M2 xgrammar $S2 m7-xgrammar-3" \
         "M1-4cores taskset4 $S1 m4-taskset4" "M1-guidance guidance $S1 m3-guidance" "M2-guidance guidance $S2 m8-guidance-2"; do
  set -- $x
  python3 $V/tracking_report.py $1 $M/predicted-$2.json $3 $M/probe $M/$4.jsonl 2>> $T
done
python3 - "$T" <<'PY'
import json, statistics, sys
d = [json.loads(x) for x in open(sys.argv[1])]
t = [abs(e) for x in d for e in x["tracked"]]
b = [abs(e) for x in d for e in x["bench_same_points"]]
print(f"\nAll {len(t)} points: median |ITL error| {statistics.median(t):.1f}% tracked, {statistics.median(b):.1f}% at the "
      f"bench speed (the same points)")
PY
rm -f "$T"
