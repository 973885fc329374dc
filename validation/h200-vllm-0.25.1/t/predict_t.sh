#!/bin/bash
# Session T's prediction grid, made before the session with the embedded default (ijm) and the model
# as it stands on main, at CPU speeds 0.40-1.60 in steps of 0.05 (P's guidance grid's command, the
# concurrencies T runs).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/t/predict_t.sh
set -eu
D=validation/h200-vllm-0.25.1/t
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cpu-speed $GRID"
python3 -m maskcost.cli predict $S --cores 14 --backend guidance --concurrency 64 96 128 256 \
  --json "$D/predicted-guidance.json" > "$D/predict-guidance.log" 2>&1
echo "$(date -u +%FT%TZ) wrote $D/predicted-guidance.json"
