#!/bin/bash
# After session D, NOT predictions: the model as changed after seeing it, run now on the same points.
# Two changes, both from schema-off measurements or engine counters, none from a schema-on point:
#  - sync points (engine CPU work per step that async scheduling hides) from the schema-off arm of
#    the --no-async-scheduling server (profiles/sync-points) or of the ngram server (profiles/ngram3-points);
#  - --spec-draft-rate: the share of decode rows that get drafts, read from vLLM's spec-decode
#    counters (0: ngram never matched with random weights).
set -eu
cd "$(dirname "$0")"
R="maskcost report --requests-factor 4"
P="--profile profiles/sync-points.json.gz"
$R $P --max-num-seqs 128 --sweep mns128/on.jsonl --out report-posthoc/mns128 --title "post hoc: max-num-seqs 128"
$R $P --backend guidance --sweep guidance/on.jsonl --out report-posthoc/guidance --title "post hoc: guidance"
$R $P --cores 4 --cpu-count 16 --sweep taskset4/on.jsonl --out report-posthoc/taskset4 --title "post hoc: 4 cores"
$R $P --no-async-scheduling --sweep sync/on.jsonl --out report-posthoc/sync --title "post hoc: --no-async-scheduling"
$R $P --sweep ../a/on.jsonl --out report-posthoc/a-async --title "post hoc: session A (xgrammar, mns 256, async)"
$R --profile profiles/ngram3-points.json.gz --spec-tokens 3 --spec-method ngram --spec-draft-rate 0 \
  --sweep ngram3/on.jsonl --out report-posthoc/ngram3 --title "post hoc: ngram k=3, draft rate 0 (measured)"
