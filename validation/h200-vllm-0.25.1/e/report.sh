#!/bin/bash
# Session E: each held-out sweep against the predictions made on the device before it ran
# (predicted/, written by predict_e.sh from profile-e.json.gz), unchanged.
# Run from the repository root: bash validation/h200-vllm-0.25.1/e/report.sh
set -eu
E=validation/h200-vllm-0.25.1/e
OUTDIR=$E/report
rep() {  # rep NAME TITLE [--score-off]
  local n=$1 t=$2; shift 2
  python -m maskcost.cli report --profile $E/profile-e.json.gz --sweep $E/$n.jsonl --predicted $E/predicted/$n.json \
    --out $OUTDIR/$n --title "session E, pre-registered: $t" "$@" > /dev/null
}
source $E/held_out.sh
