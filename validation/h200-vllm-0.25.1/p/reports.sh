#!/bin/bash
# Session P's full reports (written after the session; the pre-registered scores are p/report.sh's):
# each server's sweeps, its opening first, against p/predict_p.sh's grids (made before the session,
# unchanged), by the tool's own backtest of the median rule (`report --speed-from-earlier --speed-source
# fill`: each point at the median fill speed of the server's points before it; the opening at the bench's speed), with
# the probe's in-engine section, plots and the engine's own TTFT.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/p/reports.sh
set -eu
P=validation/h200-vllm-0.25.1/p
SPEED=$(awk '/speed/ {print $6}' $P/bench-start.txt)
rep() {  # rep NAME GRID TITLE "SWEEPS" [engine args...]
  local name=$1 grid=$2 title=$3 sweeps=$4; shift 4
  python3 -m maskcost.cli report --sweep $sweeps --predicted "$P/predicted-$grid.json" --cpu-speed "$SPEED" \
    --max-num-seqs 256 --probe $P/probe --speed-from-earlier --speed-source fill --out "$P/report-$name" \
    --title "Session P, $title, each point at the median fill speed of the points before it" "$@" > /dev/null
  echo "- $name: $(grep -m1 -- '- ITL ms' "$P/report-$name/report.md" | sed 's/- ITL ms: //')"
}
rep xgrammar xgrammar "xgrammar, server on cores 0-13, opening and two passes" \
  "$P/p1-open.jsonl $P/p2-pass1.jsonl $P/p3-pass2.jsonl" --cores 14
rep taskset4 taskset4 "xgrammar, server on cores 0-3 (cpu_count 16)" "$P/p4-taskset4-open.jsonl $P/p5-taskset4.jsonl" \
  --cores 4 --cpu-count 16
rep guidance guidance "guidance, server on cores 0-13" "$P/p6-guidance-open.jsonl $P/p7-guidance.jsonl" \
  --cores 14 --backend guidance
rep extra xgrammar "xgrammar, a fresh server on cores 0-13" "$P/p8-extra-open.jsonl $P/p9-extra.jsonl" --cores 14
