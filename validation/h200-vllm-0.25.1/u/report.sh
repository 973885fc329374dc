#!/bin/bash
# Session U report, written before the session (session_u.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/u/report.sh > validation/h200-vllm-0.25.1/u/score.md
# A dry run on other data: D=DIR bash .../u/report.sh (DIR holding bench-idle.txt, bench-start.txt, probe/,
# u1-open.jsonl, u1.jsonl, u2-..., u3-...). Session V's (v/report.sh, written after U ran): S=v, its servers
# v1-v3 in $V/v, U's grids, and where DIR holds bench-v2.txt and bench-v3.txt, a table at each server's own bench.
# Session W's (w/report.sh): S=w, and G=DIR for the grids DIR/predicted-*.json, made with the profile PROFILE.
set -eu
V=validation/h200-vllm-0.25.1; S=${S:-u}; D=${D:-$V/$S}; G=${G:-$V/u}; TMP=$(mktemp)
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt); START=$(awk '/speed/ {print $6}' $D/bench-start.txt)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
servers() {  # servers BENCH_SPEED OUT
  local n=${S^^}
  itl_row "$D" "$1" "$2" "$n ${S}1 xgrammar" $G/predicted-xgrammar.json ${S}1
  itl_row "$D" "$1" "$2" "$n ${S}2 guidance" $G/predicted-guidance.json ${S}2
  itl_row "$D" "$1" "$2" "$n ${S}3 xgrammar" $G/predicted-xgrammar.json ${S}3; }
echo "Primary, each point at the median of the ITL speeds of the server's earlier points (the bench column: bench-idle, $IDLE):"
echo
itl_header
servers "$IDLE" "$TMP"
echo
itl_summary "$TMP" "Primary, the median of the earlier points' ITL speeds" "bench-idle's speed"
echo
echo "Tertiary, at bench-start's speed ($START, read on cores 14-15 while ${S}1 started):"
echo
servers "$START" "$TMP.start" > /dev/null
itl_summary "$TMP.start" "The same points (the rule's column unchanged)" "bench-start's speed"
if [ -f "$D/bench-${S}2.txt" ]; then   # V: each server at the bench read while it started
  B2=$(awk '/speed/ {print $6}' $D/bench-${S}2.txt); B3=$(awk '/speed/ {print $6}' $D/bench-${S}3.txt)
  echo
  echo "Tertiary, each server at the bench read on cores 14-15 while it started (${S}1 $START, ${S}2 $B2, ${S}3 $B3):"
  echo
  itl_row "$D" "$START" "$TMP.own" "${S^^} ${S}1 xgrammar" $G/predicted-xgrammar.json ${S}1 > /dev/null
  itl_row "$D" "$B2" "$TMP.own" "${S^^} ${S}2 guidance" $G/predicted-guidance.json ${S}2 > /dev/null
  itl_row "$D" "$B3" "$TMP.own" "${S^^} ${S}3 xgrammar" $G/predicted-xgrammar.json ${S}3 > /dev/null
  itl_summary "$TMP.own" "The same points (the rule's column unchanged)" "each server's own start bench"
fi
rm -f "$TMP" "$TMP.start" "$TMP.own"
echo
echo "Directions: guidance against xgrammar (the grids at bench-idle's speed; measured: ${S}2 against the mean of ${S}1"
echo "and ${S}3; right where the measured change has the predicted sign and is larger in size than ${S}1 and ${S}3's gap):"
echo
python3 - "$D" "$G" "$IDLE" "$S" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import Directions, grid_at, mean_over, measured, pair_spread
D, G, speed, S = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
pg, px = grid_at(f"{G}/predicted-guidance.json", speed), grid_at(f"{G}/predicted-xgrammar.json", speed)
u1, u2, u3 = (measured(f"{D}/{S}{i}.jsonl") for i in (1, 2, 3))
d = Directions(no_change_below_pct=0.0)  # the sign, beyond u1 and u3's gap
for c in sorted(set(u2) | set(u1) | set(u3)):
    gap = pair_spread([[u1, u3]], c)  # None (not measured) unless both xgrammar servers ran c
    d.judge("guidance vs xgrammar", c, pg[c], px[c], u2.get(c), mean_over([u1, u3], c) if gap is not None else None, gap,
            f" ({S}1 {u1[c]:.1f}, {S}3 {u3[c]:.1f})" if gap is not None else "")
d.summary()
PY
echo
echo "Pooled, every pre-registered scored point of P-${S^^} ($S/pooled.py):"
echo
python3 $V/$S/pooled.py
