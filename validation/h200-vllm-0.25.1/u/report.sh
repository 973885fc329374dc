#!/bin/bash
# Session U report, written before the session (session_u.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/u/report.sh > validation/h200-vllm-0.25.1/u/score.md
# A dry run on other data: D=DIR bash .../u/report.sh (DIR holding bench-idle.txt, bench-start.txt, probe/,
# u1-open.jsonl, u1.jsonl, u2-..., u3-...)
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/u}; G=$V/u; TMP=$(mktemp)
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt); START=$(awk '/speed/ {print $6}' $D/bench-start.txt)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
servers() {  # servers BENCH_SPEED OUT
  itl_row "$D" "$1" "$2" "U u1 xgrammar" $G/predicted-xgrammar.json u1
  itl_row "$D" "$1" "$2" "U u2 guidance" $G/predicted-guidance.json u2
  itl_row "$D" "$1" "$2" "U u3 xgrammar" $G/predicted-xgrammar.json u3; }
echo "Primary, each point at the median of the ITL speeds of the server's earlier points (the bench column: bench-idle, $IDLE):"
echo
itl_header
servers "$IDLE" "$TMP"
echo
itl_summary "$TMP" "Primary, the median of the earlier points' ITL speeds" "bench-idle's speed"
echo
echo "Tertiary, at bench-start's speed ($START, read on cores 14-15 while u1 started):"
echo
servers "$START" "$TMP.start" > /dev/null
itl_summary "$TMP.start" "The same points (the rule's column unchanged)" "bench-start's speed"
rm -f "$TMP" "$TMP.start"
echo
echo "Directions: guidance against xgrammar (the grids at bench-idle's speed; measured: u2 against the mean of u1"
echo "and u3; right where the measured change has the predicted sign and is larger in size than u1 and u3's gap):"
echo
python3 - "$D" "$G" "$IDLE" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import Directions, grid_at, mean_over, measured, pair_spread
D, G, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
pg, px = grid_at(f"{G}/predicted-guidance.json", speed), grid_at(f"{G}/predicted-xgrammar.json", speed)
u1, u2, u3 = (measured(f"{D}/{n}.jsonl") for n in ("u1", "u2", "u3"))
d = Directions(no_change_below_pct=0.0)  # the sign, beyond u1 and u3's gap
for c in sorted(set(u2) | set(u1) | set(u3)):
    gap = pair_spread([[u1, u3]], c)  # None (not measured) unless both xgrammar servers ran c
    d.judge("guidance vs xgrammar", c, pg[c], px[c], u2.get(c), mean_over([u1, u3], c) if gap is not None else None, gap,
            f" (u1 {u1[c]:.1f}, u3 {u3[c]:.1f})" if gap is not None else "")
d.summary()
PY
echo
echo "Pooled, every pre-registered scored point of P-U (u/pooled.py):"
echo
python3 $V/u/pooled.py
