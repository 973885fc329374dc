#!/bin/bash
# Session L report, written before the session (session_l.sh says the order of rank): the held-out
# passes against predictions made before them, unchanged, each point at the host meter's speed
# during it. usage: bash validation/h200-vllm-0.25.1/l/report.sh
set -eu
L=validation/h200-vllm-0.25.1/l
rep() {  # rep OUT PREDICTED TITLE
  python3 -m maskcost.cli report --sweep $L/l2-held.jsonl --predicted "$2" --cores 14 --probe $L/probe \
    --hostmeter $L/meter.jsonl* --speed-from-meter --out "$L/$1" --title "Session L, $3" > /dev/null
  printf '%-22s %s\n' "$1" "$(grep -m1 -- '- ITL ms' "$L/$1/report.md")"
}
rep report-l-meter $L/predicted-l-grid.json "calibrated after the burn-in, each point at the meter's speed (primary)"
rep report-k-meter validation/h200-vllm-0.25.1/k/predicted-k-grid.json "session K's profile, each point at the meter's speed"
rep report-default-meter validation/h200-vllm-0.25.1/k/predicted-default-grid.json "embedded default, each point at the meter's speed"
