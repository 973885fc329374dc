#!/bin/bash
# Session S report, written before the session (session_s.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/s/report.sh > validation/h200-vllm-0.25.1/s/score.md
# A dry run on other data: S=DIR FOURTEEN="a14 c14" FOUR="b4 d4" bash .../s/report.sh (R's servers)
set -eu
V=validation/h200-vllm-0.25.1; S=${S:-$V/s}; T=$(mktemp)
FOURTEEN=${FOURTEEN:-"s1-14 s3-14 s5-14"}; FOUR=${FOUR:-"s2-4 s4-4 s6-4"}
SPEED=$(awk '/speed/ {print $6}' $S/bench-start.txt)
echo "Primary: the directions (the grids at the bench's speed $SPEED; measured: the engine's mean ITL over a config's"
echo "servers; spread: the median |difference| of its same-config pairs of servers, in % of the smaller):"
echo
python3 - "$S" "$SPEED" "$FOURTEEN" "$FOUR" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import POOL_SPREAD_PCT, Directions, grid_at, mean_over, measured, pair_spread
S, speed, fourteen, four = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
R = "validation/h200-vllm-0.25.1/r"
px, p4 = grid_at(f"{R}/predicted-xgrammar.json", speed), grid_at(f"{R}/predicted-taskset4.json", speed)
pn = grid_at(f"{R}/posthoc/predicted-ngram3.json", speed)
s14, s4, sn = [measured(f"{S}/{n}.jsonl") for n in fourteen], [measured(f"{S}/{n}.jsonl") for n in four], \
    measured(f"{S}/ngram3.jsonl")
d = Directions()
for c in (64, 128):
    for name, group in (("14 cores", s14), ("4 cores", s4)):
        print(f"  - {name} at {c}: " + ", ".join(f"{n} {m[c]:.1f}" for n, m in zip(fourteen if group is s14 else four, group)
                                                 if c in m))
    d.judge("4 cores vs 14", c, p4[c], px[c], mean_over(s4, c), mean_over(s14, c), pair_spread([s14, s4], c))
d.judge("ngram 3 vs none", 64, pn[64], px[64], sn.get(64), mean_over(s14, 64), pair_spread([s14, s4], 64))
d.judge("ngram 3 vs none", 256, pn[256], px[256], sn.get(256), mean_over(s14, 256), POOL_SPREAD_PCT,
        " (r/server-spread.md's pool median)")
d.summary()
PY
source $V/scoring.sh   # itl_row, itl_header, itl_summary
row() { itl_row "$S" "$SPEED" "$T" "$@"; }
echo
echo "Secondary, each point at the median of the ITL speeds of the server's earlier points (tertiary: the bench's speed):"
echo
itl_header
for s in $FOURTEEN; do row "S $s" $V/r/predicted-xgrammar.json "$s"; done
for s in $FOUR; do row "S $s" $V/r/predicted-taskset4.json "$s"; done
row "S ngram 3" $V/r/posthoc/predicted-ngram3.json ngram3
echo
itl_summary "$T" "Secondary, the median of the earlier points' ITL speeds"
rm -f "$T"
