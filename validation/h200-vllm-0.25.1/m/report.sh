#!/bin/bash
# Session M report, written before the session (session_m.sh says what is pre-registered): every
# held-out set against m/predict_m.sh's grids, made before the session and used unchanged, each point
# at the speed of the bench on the idle machine before the first server (bench-start.txt). --profile:
# the embedded default when the predictions were made (the report's header names it; the numbers
# are the prediction files').
# usage (from the repository root): bash validation/h200-vllm-0.25.1/m/report.sh > validation/h200-vllm-0.25.1/m/score.md
set -eu
M=${M:-validation/h200-vllm-0.25.1/m}   # M=DIR: a dry run on other data
SPEED=$(awk '/speed/ {print $6}' $M/bench-start.txt)
SPEED2=$(awk '/speed/ {print $6}' $M/bench-fresh.txt 2>/dev/null || true)   # machine 2 (the fresh phase)
SPEED3=$(awk '/speed/ {print $6}' $M/bench-pool.txt 2>/dev/null || true)    # machine 3 (the pool phase)
echo "CPU speed (bench-start): $SPEED"; echo
rep() {  # rep NAME SWEEP TITLE [engine args...]
  local name=$1 sweep=$2 title=$3; shift 3
  [ -s "$M/$sweep.jsonl" ] || { echo "- $name: not measured"; return 0; }
  local speed=$SPEED; [[ $name == *-m2 ]] && speed=$SPEED2; [[ $name == *-m3 ]] && speed=$SPEED3
  python3 -m maskcost.cli report --sweep "$M/$sweep.jsonl" --predicted "$M/predicted-${name%-*}.json" \
    --cpu-speed "$speed" --profile validation/h200-vllm-0.25.1/l/profile-ij-speeds.json.gz --max-num-seqs 256 --probe $M/probe --out "$M/report-$name" --title "Session M, $title" \
    "$@" > /dev/null
  echo "- $name: $(grep -m1 -- '- ITL ms' "$M/report-$name/report.md" | sed 's/- ITL ms: //')"
}
rep xgrammar m1-xgrammar "xgrammar, server on cores 0-13" --cores 14
rep unique m2-unique "xgrammar, unique schemas, server on cores 0-13" --cores 14
rep guidance m3-guidance "guidance, server on cores 0-13" --cores 14 --backend guidance
rep taskset4 m4-taskset4 "xgrammar, server on cores 0-3 (cpu_count 16)" --cores 4 --cpu-count 16
rep xgrammar-2 m5-xgrammar-2 "xgrammar, a second server on cores 0-13" --cores 14
rep xgrammar-m2 m7-xgrammar-3 "xgrammar, machine 2, server on cores 0-13" --cores 14
rep guidance-m2 m8-guidance-2 "guidance, machine 2, server on cores 0-13" --cores 14 --backend guidance
# the default after M (ijm: post hoc pool ratio), predicted before machine 3's run; its own profile named
P=$M/profile-ijm-speeds.json.gz
rep ijm-m3 m9-ijm "the default after M (ijm), machine 3, server on cores 0-13" --cores 14 --profile $P
python3 - "$M" <<'PY'
import json, os, statistics, sys
M = sys.argv[1]
rows = {}
for name in ("xgrammar", "unique", "guidance", "taskset4", "xgrammar-2", "xgrammar-m2", "guidance-m2", "ijm-m3"):
    f = f"{M}/report-{name}/report.json"
    if os.path.exists(f):
        rows[name] = {r["concurrency"]: r for r in json.load(open(f))["rows"] if r["arm"] == "on"}
prim = [r for n in ("xgrammar", "unique", "guidance", "taskset4") for r in rows.get(n, {}).values()]
errs = [abs(r["metrics"]["ITL ms"]["error_pct"]) for r in prim]
inside = [r["itl_band_ms"][0] <= r["metrics"]["ITL ms"]["measured"] <= r["itl_band_ms"][1] for r in prim if r["itl_band_ms"]]
print()
if errs:
    print(f"All four pre-registered sets: {len(errs)} points, median |ITL error| {statistics.median(errs):.1f}%; "
          f"inside the band {sum(inside)} of {len(inside)}")
for m in ("TTFT p50 ms", "server TTFT ms"):
    e = [abs(r["metrics"][m]["error_pct"]) for r in prim if r["metrics"][m]["error_pct"] is not None]
    if e:
        print(f"{m}: {len(e)} points, median |error| {statistics.median(e):.1f}%")
print()
print("| direction | at | measured (a / b) | predicted (a / b) | right |")
print("|---|---|---|---|---|")
def cmp(label, a, b, concs, metric="ITL ms"):
    for c in concs:
        if c not in rows.get(a, {}) or c not in rows.get(b, {}):
            continue
        ma, mb = (rows[x][c]["metrics"][metric]["measured"] for x in (a, b))
        pa, pb = (rows[x][c]["metrics"][metric]["predicted"] for x in (a, b))
        if abs(pa / pb - 1) < 0.02:  # no change predicted: right if the measured two are within 10%
            right = "yes (no change)" if abs(ma / mb - 1) < 0.10 else "NO (no change predicted)"
        else:
            right = "yes" if (ma < mb) == (pa < pb) else "NO"
        print(f"| {label}, {metric} | {c} | {ma:.1f} / {mb:.1f} | {pa:.1f} / {pb:.1f} | {right} |")
cmp("guidance (a) against xgrammar (b)", "guidance", "xgrammar", (64, 160, 256))
cmp("14 cores (a) against 4 (b)", "xgrammar", "taskset4", (64, 160, 256))
cmp("shared (a) against unique schemas (b)", "xgrammar", "unique", (8,))
cmp("shared (a) against unique schemas (b)", "xgrammar", "unique", (8,), "server TTFT ms")
cmp("machine 2: guidance (a) against xgrammar (b)", "guidance-m2", "xgrammar-m2", (64, 160, 256))
PY
