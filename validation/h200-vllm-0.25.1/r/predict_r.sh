#!/bin/bash
# Session R's prediction grids, made before the session with the embedded default (ijm, unchanged
# since session M), at CPU speeds 0.40-1.60 in steps of 0.05; report.sh reads each point from them at
# the median of the fill speeds of the server's points before it (session_r.sh).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/r/predict_r.sh
set -eu
R=validation/h200-vllm-0.25.1/r
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --cpu-speed $GRID"
pred() { local name=$1; shift
  python3 -m maskcost.cli predict $S --json "$R/predicted-$name.json" "$@" > "$R/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $R/predicted-$name.json"; }
pred xgrammar --cores 14 --max-num-seqs 256 --concurrency 64 96 128 160 256
pred taskset4 --cores 4 --cpu-count 16 --max-num-seqs 256 --concurrency 64 96 128
pred mns128 --cores 14 --max-num-seqs 128 --concurrency 96 160 256
pred ngram3 --cores 14 --max-num-seqs 256 --spec-tokens 3 --spec-method ngram --spec-draft-rate 0 --concurrency 64 96 256
