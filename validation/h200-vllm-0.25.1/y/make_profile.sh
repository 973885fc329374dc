#!/bin/bash
# Session Y's profile (written before Y, after W and X were scored): W's primary (w/profile-u1loop.json.gz)
# with the API server's cost per request refitted on session U's guidance server u2 (`report --fit-frontend`
# at u2's median ITL speed against u1loop, 1.16): the value of 2.0-8.0 ms whose model best matches u2's
# schema-on TTFT p50 and running counts at 8-256. The schema-off fit of session E gave 2.0 ms; u2 gives
# 4.25 ms, the probe's create_chat_completion + add_request at concurrency 8 on U-W's servers (3.6-4.7 ms, median 4.5).
# As run (at 9274214): --fit-frontend then refitted the cost per request of every request,
# TTFT's fixed part taking the difference; on main it fits a structured request's extra cost and keeps the
# schema-off costs (z/make_default.sh, the embedded default), so this script now writes that kind of profile.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/y/make_profile.sh
set -eu
V=validation/h200-vllm-0.25.1; T=$(mktemp -d)
python3 -m maskcost.cli report --profile $V/w/profile-u1loop.json.gz --sweep $V/u/u2-open.jsonl $V/u/u2.jsonl \
  --backend guidance --max-num-seqs 256 --cores 14 --cpu-count 16 --cpu-speed 1.16 --fit-frontend $T/fe.json.gz \
  --out $T/r --title fit 2> $T/err | grep "^wrote $T/fe.json.gz" | sed "s#$T/##"
python3 - "$T/fe.json.gz" $V/y/profile-u2fe.json.gz <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
save_profile(replace(p, name="h200-vllm-0.25.1-u2fe", provenance={**p.provenance, "frontend": p.provenance[
    "frontend"] + "; session U's server u2 (validation/h200-vllm-0.25.1/y/make_profile.sh)"}), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
grep '^front-end fit' $T/err > $V/y/fit-frontend.log   # the fit's trials, without the progress bars
cp $T/r/report.md $V/y/fit-frontend-u2.md
rm -rf "$T"
