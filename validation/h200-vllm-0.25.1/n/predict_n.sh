#!/bin/bash
# Session N's prediction grids, made before the session with the embedded default after session M
# (ijm, with the band), at CPU speeds 0.50-1.50 in steps of 0.05; report.sh reads them by the tracking
# rule (session_n.sh). usage (from the repository root): bash validation/h200-vllm-0.25.1/n/predict_n.sh
# Prompts as in sessions A-M: tier/flat 109 and tier/bounded 135 tokens (mean 122), 112 prefix-cached.
set -eu
N=validation/h200-vllm-0.25.1/n
GRID=$(python3 -c "print(' '.join(f'{0.50 + 0.05 * i:.2f}' for i in range(21)))")   # 0.50 ... 1.50
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cpu-speed $GRID"
pred() { local name=$1; shift
  python3 -m maskcost.cli predict $S --json "$N/predicted-$name.json" "$@" > "$N/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $N/predicted-$name.json"; }
pred xgrammar --cores 14 --concurrency 8 32 64 96 128 160 192 256
pred guidance --cores 14 --backend guidance --concurrency 64 96 160 256
pred taskset4 --cores 4 --cpu-count 16 --concurrency 64 96 160 256
