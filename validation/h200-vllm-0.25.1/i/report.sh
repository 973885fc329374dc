#!/bin/bash
# Session I reports: each held-out sweep against the predictions written on the device before it
# ran (unchanged), with the probe's in-engine timings beside the model's breakdown.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/i/report.sh
set -eu
I=validation/h200-vllm-0.25.1/i
SPEED=$(cat $I/speed.txt)
rep() {  # rep OUT SWEEP PREDICTED PROFILE TITLE [engine args]
  local out=$1 sweep=$2 pred=$3 prof=$4 title=$5; shift 5
  python3 -m maskcost.cli report --sweep "$I/$sweep" --predicted "$I/$pred" --profile "$prof" --probe $I/probe \
    --cpu-speed "$SPEED" --out "$I/$out" --title "$title" "$@" > /dev/null
}
rep report-i2 i2-on-short.jsonl predicted/i2-on-short.json $I/profile-i.json.gz \
  "Session I, xgrammar mns256: pre-registered, bench-scaled + probe-fitted engine fill"
rep report-i2-default i2-on-short.jsonl predicted-default/i2-on-short.json maskcost/profiles/default.json.gz \
  "Session I, xgrammar mns256: pre-registered, bench-scaled default profile"
rep report-i3 i3-on-unique.jsonl predicted/i3-on-unique.json $I/profile-i.json.gz \
  "Session I, unique schemas: pre-registered, bench-scaled + probe-fitted"
rep report-i5 i5-guidance.jsonl predicted-guidance-fitted/i5-guidance.json $I/profile-ig.json.gz \
  "Session I, guidance mns256: pre-registered, guidance's own probe-fitted engine fill" --backend guidance
rep report-i5-unfitted i5-guidance.jsonl predicted/i5-guidance.json $I/profile-i.json.gz \
  "Session I, guidance mns256: pre-registered, library-timed guidance fill" --backend guidance
rep report-i7 i7-taskset4.jsonl predicted/i7-taskset4.json $I/profile-i.json.gz \
  "Session I, server on 4 cores (taskset), cpu_count 16: pre-registered, probe-fitted" --cores 4 --cpu-count 16
rep report-i7-default i7-taskset4.jsonl predicted-default/i7-taskset4.json maskcost/profiles/default.json.gz \
  "Session I, server on 4 cores (taskset), cpu_count 16: pre-registered, default profile" --cores 4 --cpu-count 16
for r in report-i2 report-i2-default report-i3 report-i5 report-i5-unfitted report-i7 report-i7-default; do
  echo "$r: $(grep -m1 -- '- ITL ms' $I/$r/report.md)"
done
