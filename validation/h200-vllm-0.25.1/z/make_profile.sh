#!/bin/bash
# Session Z's profile (written after Y was scored, before Z): y/make_profile.sh again with the model on main,
# where the API server's costs now scale with the CPU speed like the rest of the host's work (Y showed the
# slow host's loop saturating where the unscaled model's did not): W's primary (w/profile-u1loop.json.gz)
# with the API server's cost per request refitted on U's guidance server u2 at its median ITL speed, 1.16:
# 5.38 ms at the profile host's speed (4.63 ms at u2's; y/profile-u2fe.json.gz, unscaled: 4.25 ms).
# As run (at 947b859): --fit-frontend then refitted the cost per request of every request,
# TTFT's fixed part taking the difference; on main it fits a structured request's extra cost and keeps the
# schema-off costs (z/make_default.sh, the embedded default), so this script now writes that kind of profile.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/z/make_profile.sh
set -eu
V=validation/h200-vllm-0.25.1; T=$(mktemp -d)
python3 -m maskcost.cli report --profile $V/w/profile-u1loop.json.gz --sweep $V/u/u2-open.jsonl $V/u/u2.jsonl \
  --backend guidance --max-num-seqs 256 --cores 14 --cpu-count 16 --cpu-speed 1.16 --fit-frontend $T/fe.json.gz \
  --out $T/r --title fit 2> $T/err | grep "^wrote $T/fe.json.gz" | sed "s#$T/##"
python3 - "$T/fe.json.gz" $V/z/profile-u2fes.json.gz <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
save_profile(replace(p, name="h200-vllm-0.25.1-u2fes", provenance={**p.provenance, "frontend": p.provenance[
    "frontend"] + "; session U's server u2, the API server's costs scaled with the CPU speed "
    "(validation/h200-vllm-0.25.1/z/make_profile.sh)"}), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
grep '^front-end fit' $T/err > $V/z/fit-frontend.log   # the fit's trials, without the progress bars
cp $T/r/report.md $V/z/fit-frontend-u2.md
rm -rf "$T"
