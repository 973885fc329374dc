#!/bin/bash
# The embedded default after sessions I and J: session E's post-hoc profile (forward curve, prefill,
# context, API server; grammar costs from sessions A-C) plus the engine step as the probe timed it:
# xgrammar's EngineFill fitted on all of session J's points (one server, bench 57.5 -> 58.4 ms over
# the session), guidance's on session I's guidance points, each at its own session's bench speed.
# usage: bash validation/h200-vllm-0.25.1/j/make_default.sh OUT.json.gz
set -eu
V=validation/h200-vllm-0.25.1; I=$V/i; J=$V/j; T=$(mktemp -d)
SI=$(cat $I/speed.txt); SJ=$(awk '/speed/ {print $6}' $J/bench-start.txt)
python3 -m maskcost.cli report --sweep $J/j1-calib.jsonl $J/j2-on-short.jsonl --probe $J/probe --cpu-speed $SJ \
  --profile $V/e/profile-e-posthoc.json.gz --fit-engine-fill $T/x.json.gz --out $T/rx --title fit | grep wrote
python3 -m maskcost.cli report --backend guidance --sweep $I/i5-guidance-calib.jsonl $I/i5-guidance.jsonl \
  --probe $I/probe --cpu-speed $SI --profile $T/x.json.gz --fit-engine-fill $T/xg.json.gz --out $T/rg --title fit | grep wrote
python3 - "$T/xg.json.gz" "$1" <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
prov = {**p.provenance, "engine_fill": "validation/h200-vllm-0.25.1/j/make_default.sh: xgrammar from session J's "
        "probe (all points), guidance from session I's guidance points"}
save_profile(replace(p, name="h200-vllm-0.25.1-ij", provenance=prov), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
rm -rf "$T"
