#!/bin/bash
# Session K report, written before the session (session_k.sh says the order of rank): the held-out
# sweeps against the predictions made before them, unchanged: the in-session profile (primary) and
# the embedded default, each at the host meter's speed during every point (interpolated between the
# grid's speeds) and at the idle bench's speed. usage: bash validation/h200-vllm-0.25.1/k/report.sh
set -eu
K=validation/h200-vllm-0.25.1/k
SPEED=$(cat $K/speed.txt)
rep() {  # rep OUT SWEEP MNS PREDICTED TITLE [speed args...]
  local out=$1 sweep=$2 mns=$3 pred=$4 title=$5; shift 5
  python3 -m maskcost.cli report --sweep "$K/$sweep.jsonl" --predicted "$pred" --max-num-seqs "$mns" --cores 14 \
    --probe $K/probe --hostmeter $K/meter.jsonl* --out "$K/$out" --title "Session K, $title" "$@" > /dev/null
  printf '%-26s %s\n' "$out" "$(grep -m1 -- '- ITL ms' "$K/$out/report.md")"
}
for m in 256 128; do
  sweep=$([ $m = 256 ] && echo k2-held || echo k3-mns128)
  [ -f "$K/$sweep.jsonl" ] || continue
  rep report-$m-k-meter $sweep $m $K/predicted-k-grid.json \
    "mns$m: in-session profile, each point at the meter's speed (primary)" --speed-from-meter
  rep report-$m-default-meter $sweep $m $K/predicted-default-grid.json \
    "mns$m: embedded default, each point at the meter's speed" --speed-from-meter
  rep report-$m-k-bench $sweep $m $K/predicted-k-bench.json \
    "mns$m: in-session profile at the idle bench's speed" --cpu-speed "$SPEED"
  rep report-$m-default-bench $sweep $m $K/predicted-default-bench.json \
    "mns$m: embedded default at the idle bench's speed" --cpu-speed "$SPEED"
done
if [ -f "$K/k4-ngram.jsonl" ]; then
  NGRAM="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"
  rep report-ngram-k-meter k4-ngram 256 $K/predicted-k-ngram-grid.json \
    "ngram k=3: in-session profile, each point at the meter's speed (primary)" --speed-from-meter $NGRAM
  rep report-ngram-default-meter k4-ngram 256 $K/predicted-default-ngram-grid.json \
    "ngram k=3: embedded default, each point at the meter's speed" --speed-from-meter $NGRAM
fi
