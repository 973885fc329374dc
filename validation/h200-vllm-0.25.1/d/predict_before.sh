#!/bin/bash
# Held-out predictions for device session D, made with the embedded default profile (c/) and the
# model at the commit that adds this file, BEFORE the session ran. Each file is what
# `maskcost predict` wrote; the session's measurements are compared with these, unchanged.
set -eu
cd "$(dirname "$0")"; mkdir -p predicted
S="--schema-id tier/flat tier/bounded"
# 1. max-num-seqs 128 at offered 160 and 256 (no fill pool: no knee), beside 256 (pool: knee)
maskcost predict $S --max-num-seqs 128 256 --concurrency 128 160 256 --json predicted/mns128.json
# 2. the guidance backend vs xgrammar
maskcost predict $S --backend guidance xgrammar --concurrency 1 8 32 128 160 256 --json predicted/guidance.json
# 3. an unseen CPU: the server on 4 cores (taskset) while vLLM sizes its pools from cpu_count 16
maskcost predict $S --cores 4 16 --cpu-count 16 --concurrency 8 64 160 256 --json predicted/taskset4.json
# 4. ngram speculative decoding, 3 draft tokens (async scheduling off). The acceptance rate is an
#    input; the engine reports it (vllm:spec_decode_num_accepted_tokens), so predict a range now
#    and read the row at the measured rate afterwards.
for a in 0.1 0.3 0.5 0.7; do
  maskcost predict $S --spec-tokens 3 --spec-method ngram --spec-acceptance $a --concurrency 1 8 64 256 \
    --json predicted/ngram3-acc$a.json
done
# 5. async scheduling off (same server flags plus --no-async-scheduling)
maskcost predict $S --no-async-scheduling --concurrency 8 64 128 160 256 --json predicted/sync.json
