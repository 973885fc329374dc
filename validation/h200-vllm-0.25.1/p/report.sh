#!/bin/bash
# Session P report, written before the session (session_p.sh says what is pre-registered); its grid and
# measured helpers in ../scoring.py since (inline when it ran, 24549db; the same score.md)
# usage (from the repository root): bash validation/h200-vllm-0.25.1/p/report.sh > validation/h200-vllm-0.25.1/p/score.md
set -eu
V=validation/h200-vllm-0.25.1; P=${P:-$V/p}; T=$(mktemp)   # P=DIR: a dry run on other data
SPEED=$(awk '/speed/ {print $6}' $P/bench-start.txt)
echo "| server | bench speed | points | median of earlier (primary) | bench, same points (secondary) | bench, all | at a grid edge | per point (conc: bench / median of earlier (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
row() { local name=$1 grid=$2; shift 2
  ls "$@" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py --rule median "$name" $P/predicted-$grid.json "$SPEED" $P/probe "$@" 2>> "$T"; }
row "P xgrammar" xgrammar $P/p1-open.jsonl $P/p2-pass1.jsonl $P/p3-pass2.jsonl
row "P 4 cores" taskset4 $P/p4-taskset4-open.jsonl $P/p5-taskset4.jsonl
row "P guidance" guidance $P/p6-guidance-open.jsonl $P/p7-guidance.jsonl
row "P xgrammar extra" xgrammar $P/p8-extra-open.jsonl $P/p9-extra.jsonl
echo
python3 - "$T" <<'PY'
import json, statistics, sys
d = [json.loads(x) for x in open(sys.argv[1])]
t = [abs(e) for x in d for e in x["tracked"]]
b = [abs(e) for x in d for e in x["bench_same_points"]]
if t:
    print(f"Primary: {len(t)} points, median |ITL error| {statistics.median(t):.1f}% at the median of the earlier "
          f"points' fill speeds ({sum(e < 10 for e in t)} within 10%); secondary: {statistics.median(b):.1f}% at the "
          f"idle bench's speed ({sum(e < 10 for e in b)} within 10%)")
PY
rm -f "$T"
echo
echo "Directions at the bench's speed (ITL ms: predicted from the grids / measured, the engine's mean over the server's points at that concurrency):"
python3 - "$P" "$SPEED" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import grid_at, measured as measured_at
P, speed = sys.argv[1], float(sys.argv[2])
grid = lambda name: grid_at(f"{P}/predicted-{name}.json", speed)  # noqa: E731
measured = lambda *names: measured_at(*(f"{P}/{n}.jsonl" for n in names))  # noqa: E731
x = measured("p2-pass1", "p3-pass2")
px = grid("xgrammar")
right = total = 0
for label, name, sweeps in (("guidance vs xgrammar", "guidance", ("p7-guidance",)),
                            ("4 cores vs 14", "taskset4", ("p5-taskset4",))):
    pg, m = grid(name), measured(*sweeps)
    for c in sorted(set(m) & set(x)):
        pd, md = pg[c] - px[c], m[c] - x[c]
        ok = (pd > 0) == (md > 0)
        right += ok
        total += 1
        print(f"- {label} at {c}: predicted {pg[c]:.1f} vs {px[c]:.1f} ({100 * pd / px[c]:+.0f}%), measured {m[c]:.1f} vs "
              f"{x[c]:.1f} ({100 * md / x[c]:+.0f}%): {'right' if ok else 'WRONG'}")
print(f"\nDirections right: {right} of {total}")
PY
