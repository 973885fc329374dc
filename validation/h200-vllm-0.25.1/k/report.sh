#!/bin/bash
# Session K report, written before the session (session_k.sh says the order of rank): the held-out
# sweeps against the predictions made before them, unchanged: the in-session profile (primary) and
# the embedded default, each at the host meter's speed during every point (interpolated between the
# grid's speeds) and at the idle bench's speed. usage: bash validation/h200-vllm-0.25.1/k/report.sh
# Changed after the session (the predictions are not): the meter wrote into $OUT, which the device
# empties before every call, so only its first call's records survive (through pass 1 of k2-held).
# A k2-held point's meter speed is therefore its first pass's; max-num-seqs 128 and ngram (later
# calls) are reported at the idle bench's speed only, ngram's from its grid (interpolated).
set -eu
K=validation/h200-vllm-0.25.1/k
SPEED=$(cat $K/speed.txt)
NGRAM="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"
rep() {  # rep OUT SWEEP MNS PREDICTED TITLE [args...]
  local out=$1 sweep=$2 mns=$3 pred=$4 title=$5; shift 5
  python3 -m maskcost.cli report --sweep "$K/$sweep.jsonl" --predicted "$pred" --max-num-seqs "$mns" --cores 14 \
    --probe $K/probe --hostmeter $K/meter.jsonl* --out "$K/$out" --title "Session K, $title" "$@" > /dev/null
  printf '%-28s %s\n' "$out" "$(grep -m1 -- '- ITL ms' "$K/$out/report.md")"
}
rep report-256-k-meter k2-held 256 $K/predicted-k-grid.json \
  "mns256: in-session profile, each point at the meter's speed (primary)" --speed-from-meter
rep report-256-default-meter k2-held 256 $K/predicted-default-grid.json \
  "mns256: embedded default, each point at the meter's speed" --speed-from-meter
for m in 256 128; do
  sweep=$([ $m = 256 ] && echo k2-held || echo k3-mns128)
  rep report-$m-k-bench $sweep $m $K/predicted-k-bench.json \
    "mns$m: in-session profile at the idle bench's speed" --cpu-speed "$SPEED"
  rep report-$m-default-bench $sweep $m $K/predicted-default-bench.json \
    "mns$m: embedded default at the idle bench's speed" --cpu-speed "$SPEED"
done
rep report-ngram-k-bench k4-ngram 256 $K/predicted-k-ngram-grid.json \
  "ngram k=3: in-session profile at the idle bench's speed" --cpu-speed "$SPEED" $NGRAM
rep report-ngram-default-bench k4-ngram 256 $K/predicted-default-ngram-grid.json \
  "ngram k=3: embedded default at the idle bench's speed" --cpu-speed "$SPEED" $NGRAM
