#!/bin/bash
# Session R report, written before the session (session_r.sh says what is pre-registered); its helpers in
# ../scoring.py since the run (inline when it ran, 1d008c8; the same score.md)
# usage (from the repository root): bash validation/h200-vllm-0.25.1/r/report.sh > validation/h200-vllm-0.25.1/r/score.md
set -eu
V=validation/h200-vllm-0.25.1; R=${R:-$V/r}; T=$(mktemp)   # R=DIR: a dry run on other data
SPEED=$(awk '/speed/ {print $6}' $R/bench-start.txt)
row() { local rule=$1 name=$2 grid=$3 s=$4
  ls "$R/$s-open.jsonl" "$R/$s.jsonl" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py --rule "$rule" "$name" $R/predicted-$grid.json "$SPEED" $R/probe \
    "$R/$s-open.jsonl" "$R/$s.jsonl" 2>> "$T.$rule"; }
servers() {  # servers RULE: one row per server
  row "$1" "R A, 14 cores" xgrammar a14
  row "$1" "R B, 4 cores" taskset4 b4
  row "$1" "R C, 14 cores" xgrammar c14
  row "$1" "R D, 4 cores" taskset4 d4
  row "$1" "R max-num-seqs 128" mns128 mns128
  row "$1" "R ngram 3" ngram3 ngram3
}
summary() {  # summary RULE LABEL
  python3 -c "import sys; sys.path.insert(0, '$V'); from scoring import summary; summary(sys.argv[1], sys.argv[2])" "$T.$1" "$2"
}
touch "$T.median" "$T.median-itl"
echo "Primary, the median of the earlier points' ITL speeds (no probe: predict --cpu-speed-from-report's default):"
echo
echo "| server | bench speed | points | median of earlier ITL speeds (primary) | bench, same points (tertiary) | bench, all | at a grid edge | per point (conc: bench / median of earlier (speed)) |"
echo "|---|---|---|---|---|---|---|---|"
servers median-itl
echo
summary median-itl "Primary, the median of the earlier points' ITL speeds"
echo
echo "Secondary, the median of the earlier points' fill speeds (the probe; session P's rule):"
echo
echo "| server | bench speed | points | median of earlier fill speeds | bench, same points | bench, all | at a grid edge | per point |"
echo "|---|---|---|---|---|---|---|---|"
servers median
echo
summary median "Secondary, the median of the earlier points' fill speeds"
rm -f "$T" "$T.median" "$T.median-itl"
echo
echo "Directions at the bench's speed (ITL ms: predicted from the grids / measured, the engine's mean over the servers' points at that concurrency):"
python3 - "$R" "$SPEED" <<'PY'
import sys
sys.path.insert(0, "validation/h200-vllm-0.25.1")
from scoring import grid_at, mean_over, measured as measured_at
R, speed = sys.argv[1], float(sys.argv[2])
grid = lambda name: grid_at(f"{R}/predicted-{name}.json", speed)  # noqa: E731
measured = lambda name: measured_at(f"{R}/{name}.jsonl")  # noqa: E731
px = grid("xgrammar")
s14 = [measured("a14"), measured("c14")]
right = total = 0
# 4 cores at serial fills: predicted no change; right where the 4-core mean is within 10% of the 14-core mean
p4, s4 = grid("taskset4"), [measured("b4"), measured("d4")]
for c in (64, 128):
    m14, m4 = mean_over(s14, c), mean_over(s4, c)
    if m14 is None or m4 is None:
        print(f"- 4 cores vs 14 at {c}: not measured")
        continue
    d = 100 * (m4 - m14) / m14
    spread = [100 * abs(a[c] - b[c]) / min(a[c], b[c]) for a, b in (s14, s4) if c in a and c in b]
    ok = abs(d) < 10
    right += ok
    total += 1
    print(f"- 4 cores vs 14 at {c}: predicted {p4[c]:.1f} vs {px[c]:.1f} ({100 * (p4[c] - px[c]) / px[c]:+.0f}%: no change), "
          f"measured {m4:.1f} vs {m14:.1f} ({d:+.0f}%; servers of one config apart by "
          f"{', '.join(f'{x:.0f}%' for x in spread) or '-'}): {'right' if ok else 'WRONG'}")
for label, name, concs in (("max-num-seqs 128 vs 256", "mns128", (160, 256)), ("ngram 3 vs none", "ngram3", (64, 256))):
    pg, m = grid(name), measured(name)
    for c in concs:
        m14 = mean_over(s14, c)
        if c not in m or m14 is None:
            print(f"- {label} at {c}: not measured")
            continue
        pd, md = pg[c] - px[c], m[c] - m14
        ok = (pd > 0) == (md > 0)
        right += ok
        total += 1
        print(f"- {label} at {c}: predicted {pg[c]:.1f} vs {px[c]:.1f} ({100 * pd / px[c]:+.0f}%), measured {m[c]:.1f} vs "
              f"{m14:.1f} ({100 * md / m14:+.0f}%): {'right' if ok else 'WRONG'}")
print(f"\nDirections right: {right} of {total}")
PY
