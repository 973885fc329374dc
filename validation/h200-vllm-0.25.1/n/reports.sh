#!/bin/bash
# Session N's full reports (written after the session; the scores that were pre-registered are
# n/report.sh's): each sweep against n/predict_n.sh's grids (made before the session, unchanged), at
# the idle bench's speed before the first server (bench-start), with the probe's in-engine section
# (each point's fill speed) and the engine's own TTFT. The resume sweep (session_n.sh resume, added
# after run and more) is read at the same speed: its own bench, on the same machine 17 minutes later,
# read 0.456 (n/README.md).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/n/reports.sh
set -eu
N=validation/h200-vllm-0.25.1/n
SPEED=$(awk '/speed/ {print $6}' $N/bench-start.txt)
rep() {  # rep NAME SWEEP GRID TITLE [engine args...]
  local name=$1 sweep=$2 grid=$3 title=$4; shift 4
  python3 -m maskcost.cli report --sweep "$N/$sweep.jsonl" --predicted "$N/predicted-$grid.json" \
    --cpu-speed "$SPEED" --max-num-seqs 256 --probe $N/probe --out "$N/report-$name" \
    --title "Session N, $title" "$@" > /dev/null
  echo "- $name: $(grep -m1 -- '- ITL ms' "$N/report-$name/report.md" | sed 's/- ITL ms: //')"
}
rep pass1 n2-pass1 xgrammar "xgrammar, server on cores 0-13, pass 1" --cores 14
rep pass2 n3-pass2 xgrammar "xgrammar, server on cores 0-13, pass 2 (reverse)" --cores 14
rep resume n9-resume xgrammar "xgrammar, a fresh server on cores 0-13 (the passes' missing points)" --cores 14
rep guidance n5-guidance guidance "guidance, server on cores 0-13" --cores 14 --backend guidance
rep taskset4 n7-taskset4 taskset4 "xgrammar, server on cores 0-3 (cpu_count 16)" --cores 4 --cpu-count 16
