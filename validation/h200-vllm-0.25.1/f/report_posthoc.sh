#!/bin/bash
# Sessions F and G after the data: the same sweeps against session E's post-hoc profile
# (e/profile-e-posthoc.json.gz: the prefill fix and the API-server queue), the model run now.
# Run from the repository root (after e/report_posthoc.sh): bash validation/h200-vllm-0.25.1/f/report_posthoc.sh
set -eu
V=validation/h200-vllm-0.25.1
rep() {  # rep SWEEP OUT TITLE [--score-off]
  local sw=$1 out=$2 t=$3; shift 3
  python -m maskcost.cli report --profile $V/e/profile-e-posthoc.json.gz --sweep $sw --out $out --title "$t" "$@" > /dev/null
  echo "== $out"; sed -n '/^| arm/,$p' $out/report.md | grep -v "^!\[" | grep -v "^$" | grep -v "^|---"
}
rep $V/f/fa-off-short.jsonl $V/f/report-posthoc/fa-off-short "session F, post hoc: schema off, client in 4 processes" --score-off
rep $V/f/fc-off-unique1000.jsonl $V/f/report-posthoc/fc-off-unique1000 "session F, post hoc: schema off, unique 1000-token prompts" --score-off
rep $V/f/fd-on-short.jsonl $V/f/report-posthoc/fd-on-short "session F, post hoc: xgrammar flat + bounded (the slow server: see README)"
rep "$V/g/g1-core15.jsonl $V/g/g2-cores12-15.jsonl $V/g/g3-core15.jsonl" $V/g/report-posthoc "session G, post hoc: xgrammar flat + bounded, 3 runs (client core 15, cores 12-15, core 15)"
