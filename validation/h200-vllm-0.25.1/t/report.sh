#!/bin/bash
# Session T report, written before the session (session_t.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/t/report.sh > validation/h200-vllm-0.25.1/t/score.md
# A dry run on other data: D=DIR bash .../t/report.sh (DIR holding bench-start.txt, probe/, g14-open.jsonl, g14.jsonl)
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/t}; S=$V/s; TMP=$(mktemp)
SPEED=$(awk '/speed/ {print $6}' $D/bench-start.txt); SPEED_S=$(awk '/speed/ {print $6}' $S/bench-start.txt)
row() { local name=$1 grid=$2 s=$3
  ls "$D/$s-open.jsonl" "$D/$s.jsonl" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py --rule median-itl "$name" "$grid" "$SPEED" $D/probe "$D/$s-open.jsonl" "$D/$s.jsonl" \
    2>> "$TMP"; }
echo "Secondary, each point at the median of the ITL speeds of the server's earlier points (tertiary: the bench's speed):"
echo
echo "| server | bench speed | points | median of earlier ITL speeds | bench, same points | bench, all | at a grid edge | per point (conc: bench / median of earlier (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
row "T guidance" $V/t/predicted-guidance.json g14
echo
python3 -c "import sys; sys.path.insert(0, '$V'); from scoring import summary; summary(sys.argv[1], sys.argv[2])" "$TMP" \
  "Secondary, the median of the earlier points' ITL speeds"
rm -f "$TMP"
echo
echo "Primary: guidance against xgrammar (the grids at T's bench speed $SPEED; measured: T's guidance server against"
echo "S's 14-core xgrammar servers, bench speed $SPEED_S, another machine; spread: S's same-config pairs, 7.0% at 256):"
echo
python3 - "$D" "$S" "$SPEED" <<'PY'
import itertools, statistics, sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import grid_at, mean_over, measured
D, S, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
pg = grid_at("validation/h200-vllm-0.25.1/t/predicted-guidance.json", speed)
px = grid_at("validation/h200-vllm-0.25.1/r/predicted-xgrammar.json", speed)
g = measured(f"{D}/g14.jsonl")
s14 = [measured(f"{S}/{n}.jsonl") for n in ("s1-14", "s3-14", "s5-14")]
s4 = [measured(f"{S}/{n}.jsonl") for n in ("s2-4", "s4-4", "s6-4")]
def spread(c):  # as s/report.sh: the median |difference| of S's same-config pairs at c, in % of the smaller
    if c == 256:
        return 7.0  # r/server-spread.md: two servers, pool fills, median apart
    return statistics.median(100 * abs(a[c] - b[c]) / min(a[c], b[c]) for grp in (s14, s4)
                             for a, b in itertools.combinations(grp, 2) if c in a and c in b)
right = total = 0
for c in (64, 128, 256):
    mx = mean_over(s14, c)
    if c not in g or mx is None:
        print(f"- guidance vs xgrammar at {c}: not measured")
        continue
    pd, md, sp = 100 * (pg[c] - px[c]) / px[c], 100 * (g[c] - mx) / mx, spread(c)
    ok = (md > 0) == (pd > 0) and abs(md) > sp
    right += ok
    total += 1
    print(f"- guidance vs xgrammar at {c}: predicted {pg[c]:.1f} vs {px[c]:.1f} ({pd:+.1f}%), measured {g[c]:.1f} vs "
          f"{mx:.1f} ({md:+.1f}%), spread {sp:.1f}% (the sign, beyond the spread): {'right' if ok else 'WRONG'}")
print(f"\nDirections right: {right} of {total}")
PY
echo
echo "Pooled, every pre-registered scored point of P, R, S and T (t/pooled.py):"
echo
python3 $V/t/pooled.py
