#!/bin/bash
# Session J report: the held-out points against predicted-j.json (written on the device before them,
# unchanged), with the probe's in-engine timings. usage: bash validation/h200-vllm-0.25.1/j/report.sh
set -eu
J=validation/h200-vllm-0.25.1/j
SPEED=$(awk '/speed/ {print $6}' $J/bench-start.txt)
python3 -m maskcost.cli report --sweep $J/j2-on-short.jsonl --predicted $J/predicted-j.json --profile $J/profile-j.json.gz \
  --probe $J/probe --cpu-speed "$SPEED" --out $J/report \
  --title "Session J, xgrammar mns256: pre-registered, calibrated in-session (8/96/192) with the probe" > /dev/null
grep -m1 -- '- ITL ms' $J/report/report.md
