#!/bin/bash
# Session E predictions, made on the device between the calibration sweeps and the held-out ones
# (session_e.sh runs this, and the files' times are before the first held-out request).
# usage: bash validation/h200-vllm-0.25.1/e/predict_e.sh PROFILE OUTDIR
# Prompt lengths (tokens, as the server counts them, chat template included): schema-off 19,
# tier/flat 109, tier/bounded 135 (mean 122; session A's records); --prompt-pad N adds N + 3
# ("Context", ":", "\n\n"), a --unique-prompts nonce about 12 more. Cached (prefix cache, whole
# 16-token blocks, the last token always computed): model.config.prefix_cached_tokens for shared
# prompts, 0 for unique ones.
set -eu
P=$1; O=$2; mkdir -p "$O"
MC="python3 -m maskcost.cli"
S="--schema-id tier/flat tier/bounded"
OFF="--unstructured-lengths fixed:96"
pred() { local name=$1; shift; $MC predict --profile "$P" $S --json "$O/$name.json" "$@" > "$O/$name.txt" 2>&1; }
# held out: schema-off, unique 1000-token prompts (prefill in the decode steps, TTFT under load)
pred h1-off-unique1000 $OFF --concurrency 8 32 128 --prompt-tokens 1034 --prompt-cached-tokens 0
# held out: schema-off, a shared 3000-token prompt (context beyond the 2000 of the calibration)
pred h2-off-shared3000 $OFF --concurrency 32 128 --prompt-tokens 3022 --prompt-cached-tokens 3008
# held out: schema on (xgrammar, flat + bounded), a shared 1000-token prompt
pred h3-on-shared1000 --concurrency 8 64 192 --prompt-tokens 1125 --prompt-cached-tokens 1120
# held out: unique schemas (variant compile), schema prompts
pred h4-on-unique --unique-schemas --concurrency 1 8 --prompt-tokens 122 --prompt-cached-tokens 112
# held out: session A's configuration again, longer points, 2 repeats (was the 29% error noise?)
pred h5-on-short --concurrency 8 32 64 160 256 --prompt-tokens 122 --prompt-cached-tokens 112
ls -la --time-style=full-iso "$O"
