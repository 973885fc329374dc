#!/bin/bash
# Session F against the predictions made before it ran (f/predicted, from e/profile-e-posthoc.json.gz
# as it was at commit 2fddafa: no API-server term), unchanged. Run from the repository root:
#   bash validation/h200-vllm-0.25.1/f/report.sh
set -eu
F=validation/h200-vllm-0.25.1/f
P=$F/profile-used.json.gz
git show 2fddafa:validation/h200-vllm-0.25.1/e/profile-e-posthoc.json.gz > $P
rep() {  # rep NAME TITLE [--score-off]
  local n=$1 t=$2; shift 2
  python -m maskcost.cli report --profile $P --sweep $F/$n.jsonl --predicted $F/predicted/$n.json \
    --out $F/report/$n --title "session F, pre-registered: $t" "$@" > /dev/null
}
rep fa-off-short "schema off, client in 4 processes" --score-off
rep fc-off-unique1000 "schema off, unique 1000-token prompts, client in 4 processes" --score-off
rep fd-on-short "xgrammar flat + bounded, client in 2 processes" 
for n in fa-off-short fc-off-unique1000 fd-on-short; do
  echo "== $n"; sed -n '/^| arm/,$p' $F/report/$n/report.md | grep -v "^!\[" | grep -v "^$" | grep -v "^|---"
done
