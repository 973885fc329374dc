#!/bin/bash
# Session O report, written before the session (session_o.sh says what is pre-registered).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/o/report.sh > validation/h200-vllm-0.25.1/o/score.md
set -eu
V=validation/h200-vllm-0.25.1; O=${O:-$V/o}   # O=DIR: a dry run on other data
SPEED=$(awk '/speed/ {print $6}' $O/bench-start.txt)
FILL=$(python3 -c "import json, sys; print(repr(json.load(open(sys.argv[1]))['cpu_speed_from_report']['median']))" $O/predicted-o.json)
rep() {  # rep NAME PREDICTED SPEED TITLE
  python3 -m maskcost.cli report --sweep $O/o2-held.jsonl --predicted "$2" --cpu-speed "$3" --max-num-seqs 256 \
    --cores 14 --probe $O/probe --out "$O/report-$1" --title "Session O, $4" > /dev/null
  echo "- $1 ($4, speed $3): $(grep -m1 -- '- ITL ms' "$O/report-$1/report.md" | sed 's/- ITL ms: //')"
}
rep tracked $O/predicted-o.json "$FILL" "primary: predict --cpu-speed-from-report on the openings, on the device"
rep bench $V/n/predicted-xgrammar.json "$SPEED" "secondary: session N's grid at the bench's speed"
