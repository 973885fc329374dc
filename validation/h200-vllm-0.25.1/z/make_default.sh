#!/bin/bash
# The embedded default profile (written after Z was scored): Z's profile made again with the API server's
# structured requests apart (ForwardCurve.frontend_structured_ms): W's u1loop with the schema-off costs of
# session E kept (66 us a token, 2.00 ms a request: the schema-off arm stays E's) and the extra per structured
# request fitted on U's guidance server u2 at its median ITL speed, 1.16 (report --fit-frontend).
# Checked post hoc on Y and Z against u2fes (z/default-check.md).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/z/make_default.sh
set -eu
V=validation/h200-vllm-0.25.1; T=$(mktemp -d)
python3 -m maskcost.cli report --profile $V/w/profile-u1loop.json.gz --sweep $V/u/u2-open.jsonl $V/u/u2.jsonl \
  --backend guidance --max-num-seqs 256 --cores 14 --cpu-count 16 --cpu-speed 1.16 --fit-frontend $T/fe.json.gz \
  --out $T/r --title fit 2> $T/err | grep "^wrote $T/fe.json.gz" | sed "s#$T/##"
python3 - "$T/fe.json.gz" maskcost/profiles/default.json.gz <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
save_profile(replace(p, name="h200-vllm-0.25.1-default-z", provenance={**p.provenance, "frontend": p.provenance[
    "frontend"] + "; session U's server u2, the API server's costs scaled with the CPU speed "
    "(validation/h200-vllm-0.25.1/z/make_default.sh)"}), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
grep '^front-end fit' $T/err > $V/z/fit-default.log   # the fit's trials, without the progress bars
rm -rf "$T"
