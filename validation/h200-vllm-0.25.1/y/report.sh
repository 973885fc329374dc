#!/bin/bash
# Session Y report, written before the session (session_y.sh says what is pre-registered): the primary (Y's
# grids and profile, y1-y4 by the median-itl rule), the tertiary (bench-start), the directions (y2 and y4
# each against y1 and y3), the P-Y pooled score, and the comparator (W's grids and profile, the same rule).
# Run it twice: the pooled table reads the score.md the first run wrote.
# A dry run on other data: D=DIR S=LETTER (DIR holding bench-idle.txt, bench-start.txt, probe/, S1-open.jsonl, S1.jsonl, ...).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/y/report.sh > validation/h200-vllm-0.25.1/y/score.md
set -eu
V=validation/h200-vllm-0.25.1; S=${S:-y}; D=${D:-$V/y}; TMP=$(mktemp)
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt); START=$(awk '/speed/ {print $6}' $D/bench-start.txt)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
servers() {  # servers BENCH_SPEED OUT GRIDS PROFILE
  local i b
  for i in 1 2 3 4; do
    b=xgrammar; [ $((i % 2)) = 0 ] && b=guidance
    PROFILE=$4 itl_row "$D" "$1" "$2" "${S^^} $S$i $b" $3/predicted-$b.json $S$i
  done; }
echo "## Primary: Y's profile (y/profile-u2fe.json.gz) and grids"
echo
echo "Primary, each point at the median of the ITL speeds of the server's earlier points (the bench column: bench-idle, $IDLE):"
echo
itl_header
servers "$IDLE" "$TMP" $V/y $V/y/profile-u2fe.json.gz
echo
itl_summary "$TMP" "Primary, the median of the earlier points' ITL speeds" "bench-idle's speed"
echo
echo "Tertiary, at bench-start's speed ($START, read on cores 14-15 while ${S}1 started):"
echo
servers "$START" "$TMP.start" $V/y $V/y/profile-u2fe.json.gz > /dev/null
itl_summary "$TMP.start" "The same points (the rule's column unchanged)" "bench-start's speed"
echo
echo "Directions: guidance against xgrammar (the grids at bench-idle's speed; measured: ${S}2, and ${S}4, each against the"
echo "mean of ${S}1 and ${S}3; right where the measured change has the predicted sign and is larger in size than ${S}1 and ${S}3's gap):"
echo
python3 - "$D" "$V/y" "$IDLE" "$S" <<'PY'
import os
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import Directions, grid_at, mean_over, measured, pair_spread
D, G, speed, S = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
pg, px = grid_at(f"{G}/predicted-guidance.json", speed), grid_at(f"{G}/predicted-xgrammar.json", speed)
x1, x3 = measured(f"{D}/{S}1.jsonl"), measured(f"{D}/{S}3.jsonl")
d = Directions(no_change_below_pct=0.0)  # the sign, beyond x1 and x3's gap
for g in (g for g in (2, 4) if os.path.exists(f"{D}/{S}{g}.jsonl")):  # (a dry run on a session without y4)
    gs = measured(f"{D}/{S}{g}.jsonl")
    for c in sorted(set(gs) | set(x1) | set(x3)):
        gap = pair_spread([[x1, x3]], c)  # None (not measured) unless both xgrammar servers ran c
        d.judge(f"{S}{g} guidance vs xgrammar", c, pg[c], px[c], gs.get(c), mean_over([x1, x3], c) if gap is not None
                else None, gap, f" ({S}1 {x1[c]:.1f}, {S}3 {x3[c]:.1f})" if gap is not None else "")
d.summary()
PY
echo
echo "Pooled, every pre-registered scored point of P-${S^^} (y/pooled.py):"
echo
python3 $V/y/pooled.py
echo
echo "## Comparator: the same points against W's grids and profile (w/profile-u1loop.json.gz)"
echo
itl_header
servers "$IDLE" "$TMP.w" $V/w $V/w/profile-u1loop.json.gz
echo
itl_summary "$TMP.w" "Comparator, the median of the earlier points' ITL speeds" "bench-idle's speed"
rm -f "$TMP" "$TMP.start" "$TMP.w"
