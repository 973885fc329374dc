#!/bin/bash
# Session F predictions, made here before the run from session E's post-hoc profile
# (e/profile-e-posthoc.json.gz: forward curve, prefill points and context slope of session E's
# calibration sweeps; grammar costs of the embedded default). Run from the repository root:
#   bash validation/h200-vllm-0.25.1/f/predict_f.sh
# Prompt lengths as in e/predict_e.sh (schema-off 19 tokens, schema prompts 122 on average, a
# nonce-led 1000-token pad 1034).
set -eu
P=validation/h200-vllm-0.25.1/e/profile-e-posthoc.json.gz; O=validation/h200-vllm-0.25.1/f/predicted
mkdir -p $O
MC="python -m maskcost.cli"
S="--schema-id tier/flat tier/bounded"
OFF="--unstructured-lengths fixed:96"
pred() { local name=$1; shift; $MC predict --profile $P $S --json $O/$name.json "$@" > $O/$name.txt 2>&1; }
pred fa-off-short $OFF --concurrency 1 8 32 64 128 192 256 --prompt-tokens 19 --prompt-cached-tokens 16
pred fc-off-unique1000 $OFF --concurrency 32 128 --prompt-tokens 1034 --prompt-cached-tokens 0
pred fd-on-short --concurrency 8 64 160 256 --prompt-tokens 122 --prompt-cached-tokens 112
