#!/bin/bash
# Post hoc (after sessions I and J): the pool built from its parts with the in-engine excess the
# probe timed (EngineFill.pool_excess_points), on top of the engine-CPU curve. Each check fits on
# some points and scores others; none of these predictions was written before its measurement.
# usage: bash validation/h200-vllm-0.25.1/j/report_posthoc.sh
set -eu
V=validation/h200-vllm-0.25.1; I=$V/i; J=$V/j; O=$J/posthoc; mkdir -p $O
SI=$(cat $I/speed.txt); SJ=$(awk '/speed/ {print $6}' $J/bench-start.txt)
MC="python3 -m maskcost.cli"
fit() {  # fit OUT SPEED PROBE SWEEP... (xgrammar, onto the embedded default)
  local out=$1 speed=$2 probe=$3; shift 3
  $MC report --sweep "$@" --probe $probe --cpu-speed $speed --fit-engine-fill $out --out $O/fit-$(basename $out .json.gz) \
    --title "fit" | grep wrote
}
score() {  # score NAME PROFILE SPEED PROBE SWEEP...
  local name=$1 prof=$2 speed=$3 probe=$4; shift 4
  $MC report --sweep "$@" --profile $prof --probe $probe --cpu-speed $speed --out $O/$name --title "post hoc: $name" > /dev/null
  echo "$name: $(grep -m1 -- '- ITL ms' $O/$name/report.md)"
}
fit $O/profile-j-calib.json.gz $SJ $J/probe $J/j1-calib.jsonl
score j-calib-to-j-heldout $O/profile-j-calib.json.gz $SJ $J/probe $J/j2-on-short.jsonl
fit $O/profile-i-calib.json.gz $SI $I/probe $I/i1-calib.jsonl
score i-calib-to-i-heldout $O/profile-i-calib.json.gz $SI $I/probe $I/i2-on-short.jsonl
fit $O/profile-i-all.json.gz $SI $I/probe $I/i1-calib.jsonl $I/i2-on-short.jsonl $I/i3-on-unique.jsonl
score i-all-to-j $O/profile-i-all.json.gz $SJ $J/probe $J/j1-calib.jsonl $J/j2-on-short.jsonl
fit $O/profile-j-all.json.gz $SJ $J/probe $J/j1-calib.jsonl $J/j2-on-short.jsonl
score j-all-to-i $O/profile-j-all.json.gz $SI $I/probe $I/i1-calib.jsonl $I/i2-on-short.jsonl $I/i3-on-unique.jsonl
