#!/bin/bash
# Session E: each held-out sweep against the predictions made on the device before it ran
# (predicted/, written by predict_e.sh from profile-e.json.gz), unchanged.
# Run from the repository root: bash validation/h200-vllm-0.25.1/e/report.sh
set -eu
E=validation/h200-vllm-0.25.1/e
rep() {  # rep NAME TITLE [--score-off]
  local n=$1 t=$2; shift 2
  python -m maskcost.cli report --profile $E/profile-e.json.gz --sweep $E/$n.jsonl --predicted $E/predicted/$n.json \
    --out $E/report/$n --title "session E, pre-registered: $t" "$@" > /dev/null
}
rep h1-off-unique1000 "schema off, unique 1000-token prompts (every prompt computed)" --score-off
rep h2-off-shared3000 "schema off, a shared 3000-token prompt (prefix-cached)" --score-off
rep h3-on-shared1000 "xgrammar flat + bounded, a shared 1000-token prompt"
rep h4-on-unique "xgrammar, unique schemas (variant compile)"
rep h5-on-short "xgrammar flat + bounded, session A's configuration again, 8 rounds, 2 repeats"
for n in h1-off-unique1000 h2-off-shared3000 h3-on-shared1000 h4-on-unique h5-on-short; do
  echo "== $n"; sed -n '/^| arm/,$p' $E/report/$n/report.md | grep -v "^!\[" | grep -v "^$"
done
