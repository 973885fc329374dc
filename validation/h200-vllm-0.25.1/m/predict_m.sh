#!/bin/bash
# Session M's predictions, made here (2-core AMD EPYC) with the embedded default (ij, with the band)
# before the session and committed before it: a grid of CPU speeds per held-out set; report.sh reads
# each at the speed of the bench measured on the device before the first server started.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/m/predict_m.sh
# Prompts as in sessions A-L: tier/flat 109 and tier/bounded 135 tokens (mean 122), 112 prefix-cached.
set -eu
M=validation/h200-vllm-0.25.1/m
GRID=$(python3 -c "print(' '.join(f'{0.60 + 0.05 * i:.2f}' for i in range(15)))")   # 0.60 ... 1.30
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cpu-speed $GRID"
pred() { local name=$1; shift
  python3 -m maskcost.cli predict $S --json "$M/predicted-$name.json" "$@" > "$M/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $M/predicted-$name.json"; }
pred xgrammar --cores 14 --concurrency 8 32 64 128 160 256                # the server on cores 0-13
pred unique --cores 14 --unique-schemas --concurrency 1 8                  # every request compiles a variant
pred guidance --cores 14 --backend guidance --concurrency 64 160 256       # llguidance in the engine
pred taskset4 --cores 4 --cpu-count 16 --concurrency 64 160 256            # 4 cores, pools sized for 16
