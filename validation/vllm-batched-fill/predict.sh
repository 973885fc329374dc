#!/bin/bash
# vllm#51331's batched xgrammar fill, predicted before it merges (README: "An engine change priced before it
# ships"; docs/model.md): vLLM 0.33.0 as read from its wheel, and the same with the PR, on the embedded profile
# (H200 host), vLLM's pool at max-num-seqs 1024, 128-1,024 clients. Run from the repository root:
#   bash validation/vllm-batched-fill/predict.sh   -> validation/vllm-batched-fill/predicted-*.json (+ .png)
set -euo pipefail
D=validation/vllm-batched-fill
for v in 0.33.0 0.33.0+batched-fill; do
  maskcost predict --engine-version "$v" --max-num-seqs 1024 --concurrency 128 256 512 1024 --backend xgrammar \
    --json "$D/predicted-${v/+/-}.json" --no-band
done
