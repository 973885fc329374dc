#!/bin/bash
# Session U report, written before the session (session_u.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/u/report.sh > validation/h200-vllm-0.25.1/u/score.md
# A dry run on other data: D=DIR bash .../u/report.sh (DIR holding bench-idle.txt, bench-start.txt, probe/,
# u1-open.jsonl, u1.jsonl, u2-..., u3-...)
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/u}; G=$V/u; TMP=$(mktemp)
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt); START=$(awk '/speed/ {print $6}' $D/bench-start.txt)
row() { local bench=$1 out=$2 name=$3 grid=$4 s=$5
  ls "$D/$s-open.jsonl" "$D/$s.jsonl" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py --rule median-itl "$name" $G/predicted-$grid.json "$bench" $D/probe "$D/$s-open.jsonl" \
    "$D/$s.jsonl" 2>> "$out"; }
servers() { row "$1" "$2" "U u1 xgrammar" xgrammar u1; row "$1" "$2" "U u2 guidance" guidance u2
  row "$1" "$2" "U u3 xgrammar" xgrammar u3; }
summary() { python3 -c "import sys; sys.path.insert(0, '$V'); from scoring import summary; summary(*sys.argv[1:])" "$@"; }
echo "Primary, each point at the median of the ITL speeds of the server's earlier points (the bench column: bench-idle, $IDLE):"
echo
echo "| server | bench speed | points | median of earlier ITL speeds | bench, same points | bench, all | at a grid edge | per point (conc: bench / median of earlier (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
servers "$IDLE" "$TMP"
echo
summary "$TMP" "Primary, the median of the earlier points' ITL speeds" "bench-idle's speed"
echo
echo "Tertiary, at bench-start's speed ($START, read on cores 14-15 while u1 started):"
echo
servers "$START" "$TMP.start" > /dev/null
summary "$TMP.start" "The same points (the rule's column unchanged)" "bench-start's speed"
rm -f "$TMP" "$TMP.start"
echo
echo "Directions: guidance against xgrammar (the grids at bench-idle's speed; measured: u2 against the mean of u1"
echo "and u3; right where the measured change has the predicted sign and is larger in size than u1 and u3's gap):"
echo
python3 - "$D" "$G" "$IDLE" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import grid_at, mean_over, measured
D, G, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
pg, px = grid_at(f"{G}/predicted-guidance.json", speed), grid_at(f"{G}/predicted-xgrammar.json", speed)
u1, u2, u3 = (measured(f"{D}/{n}.jsonl") for n in ("u1", "u2", "u3"))
right = total = 0
for c in sorted(set(u2) | set(u1) | set(u3)):
    mx = mean_over([u1, u3], c)
    if c not in u2 or c not in u1 or c not in u3:
        print(f"- guidance vs xgrammar at {c}: not measured on all three servers")
        continue
    pd, md = 100 * (pg[c] - px[c]) / px[c], 100 * (u2[c] - mx) / mx
    gap = 100 * abs(u1[c] - u3[c]) / min(u1[c], u3[c])
    ok = (md > 0) == (pd > 0) and abs(md) > gap
    right += ok
    total += 1
    print(f"- guidance vs xgrammar at {c}: predicted {pg[c]:.1f} vs {px[c]:.1f} ({pd:+.1f}%), measured {u2[c]:.1f} vs "
          f"{mx:.1f} ({md:+.1f}%; u1 {u1[c]:.1f}, u3 {u3[c]:.1f}, {gap:.1f}% apart): {'right' if ok else 'WRONG'}")
print(f"\nDirections right: {right} of {total}")
PY
echo
echo "Pooled, every pre-registered scored point of P-U (u/pooled.py):"
echo
python3 $V/u/pooled.py
