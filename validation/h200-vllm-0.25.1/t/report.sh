#!/bin/bash
# Session T report, written before the session (session_t.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/t/report.sh > validation/h200-vllm-0.25.1/t/score.md
# A dry run on other data: D=DIR bash .../t/report.sh (DIR holding bench-start.txt, probe/, g14-open.jsonl, g14.jsonl)
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/t}; S=$V/s; TMP=$(mktemp)
SPEED=$(awk '/speed/ {print $6}' $D/bench-start.txt); SPEED_S=$(awk '/speed/ {print $6}' $S/bench-start.txt)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
echo "Secondary, each point at the median of the ITL speeds of the server's earlier points (tertiary: the bench's speed):"
echo
itl_header
itl_row "$D" "$SPEED" "$TMP" "T guidance" $V/t/predicted-guidance.json g14
echo
itl_summary "$TMP" "Secondary, the median of the earlier points' ITL speeds"
rm -f "$TMP"
echo
echo "Primary: guidance against xgrammar (the grids at T's bench speed $SPEED; measured: T's guidance server against"
echo "S's 14-core xgrammar servers, bench speed $SPEED_S, another machine; spread: S's same-config pairs, 7.0% at 256):"
echo
python3 - "$D" "$S" "$SPEED" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import POOL_SPREAD_PCT, Directions, grid_at, mean_over, measured, pair_spread
D, S, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
pg = grid_at("validation/h200-vllm-0.25.1/t/predicted-guidance.json", speed)
px = grid_at("validation/h200-vllm-0.25.1/r/predicted-xgrammar.json", speed)
g = measured(f"{D}/g14.jsonl")
s14 = [measured(f"{S}/{n}.jsonl") for n in ("s1-14", "s3-14", "s5-14")]
s4 = [measured(f"{S}/{n}.jsonl") for n in ("s2-4", "s4-4", "s6-4")]
d = Directions(no_change_below_pct=0.0)  # the sign, beyond the spread
for c in (64, 128, 256):  # the spread as s/report.sh's: S's same-config pairs, R's pool median at 256
    d.judge("guidance vs xgrammar", c, pg[c], px[c], g.get(c), mean_over(s14, c),
            POOL_SPREAD_PCT if c == 256 else pair_spread([s14, s4], c))
d.summary()
PY
echo
echo "Pooled, every pre-registered scored point of P, R, S and T (t/pooled.py):"
echo
python3 $V/t/pooled.py
