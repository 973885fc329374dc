#!/bin/bash
# Measured (session D) vs the predictions committed before it ran (predicted/), unchanged.
set -eu
cd "$(dirname "$0")"
R="maskcost report --requests-factor 4"
$R --predicted predicted/mns128.json --max-num-seqs 128 --sweep mns128/on.jsonl mns128/off.jsonl \
  --out report/mns128 --title "held out: max-num-seqs 128 (xgrammar, async)"
$R --predicted predicted/guidance.json --backend guidance --sweep guidance/on.jsonl \
  --out report/guidance --title "held out: guidance backend (max-num-seqs 256, async)"
$R --predicted predicted/taskset4.json --cores 4 --cpu-count 16 --sweep taskset4/on.jsonl \
  --out report/taskset4 --title "held out: server on 4 cores (taskset), cpu_count 16"
# the engine proposed no ngram drafts at all (counters: 0 drafts), so the lowest pre-registered
# acceptance is the nearest; the model assumed k drafts on every row (see README.md here)
$R --predicted predicted/ngram3-acc0.1.json --spec-tokens 3 --spec-method ngram --spec-acceptance 0.1 \
  --sweep ngram3/on.jsonl ngram3/off.jsonl --out report/ngram3 --title "held out: ngram speculative decoding, k=3"
$R --predicted predicted/sync.json --no-async-scheduling --sweep sync/on.jsonl sync/off.jsonl \
  --out report/sync --title "held out: --no-async-scheduling"
