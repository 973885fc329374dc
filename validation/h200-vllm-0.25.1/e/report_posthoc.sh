#!/bin/bash
# Session E, after the data (not predictions): the calibration fix found in the pre-registered
# reports (prefill points from nonce-led prompts count the whole prompt, calibrate.engine.prefill_tokens),
# a profile re-made from the same calibration sweeps, with the API server fitted on the schema-off
# forward sweep (calibrate --frontend, added after the data), and the model run now on the held-out points.
# Run from the repository root: bash validation/h200-vllm-0.25.1/e/report_posthoc.sh
set -eu
E=validation/h200-vllm-0.25.1/e
MC="python -m maskcost.cli"
$MC calibrate --engine-only --engine-from validation/h200-vllm-0.25.1/d/profiles/sync-points-variants.json.gz --forward-sweep $E/e1-off-short.jsonl \
  --prefill-sweep $E/e2-prefill500.jsonl $E/e2-prefill1500.jsonl $E/e2-prefill3000.jsonl \
  --context-sweep $E/e3-context2000.jsonl --frontend --name h200-vllm-0.25.1-e-posthoc --out $E/profile-e-posthoc.json.gz \
  --engine-note "vLLM 0.25.1 serve --load-format dummy --max-num-seqs 256 xgrammar disable_any_whitespace, max_num_batched_tokens 8192, prefix caching on, TP=1, H200, client pinned to core 15 (session E)"
OUTDIR=$E/report-posthoc
rep() {  # rep NAME TITLE [--score-off]
  local n=$1 t=$2; shift 2
  $MC report --profile $E/profile-e-posthoc.json.gz --sweep $E/$n.jsonl --out $OUTDIR/$n \
    --title "session E, post hoc: $t" "$@" > /dev/null
}
source $E/held_out.sh
