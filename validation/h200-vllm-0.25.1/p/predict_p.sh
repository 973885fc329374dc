#!/bin/bash
# Session P's prediction grids, made before the session with the embedded default (ijm, unchanged
# since session M), at CPU speeds 0.40-1.60 in steps of 0.05; report.sh reads each point from them at
# the median of the fill speeds of the server's points before it (session_p.sh).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/p/predict_p.sh
# Prompts as in sessions A-O: tier/flat 109 and tier/bounded 135 tokens (mean 122), 112 prefix-cached.
set -eu
P=validation/h200-vllm-0.25.1/p
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cpu-speed $GRID"
pred() { local name=$1; shift
  python3 -m maskcost.cli predict $S --json "$P/predicted-$name.json" "$@" > "$P/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $P/predicted-$name.json"; }
pred xgrammar --cores 14 --concurrency 32 64 96 128 160 192 224 256
pred taskset4 --cores 4 --cpu-count 16 --concurrency 64 96 128 160 192 256
pred guidance --cores 14 --backend guidance --concurrency 64 96 128 160 192 256
