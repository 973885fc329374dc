#!/bin/bash
# The embedded default after sessions K and L: session E's post-hoc profile (forward curve, prefill,
# context, API server; grammar costs from sessions A-C) plus the engine step as the probe timed it on
# three servers: xgrammar's EngineFill fitted on all max-num-seqs 256 points of sessions J, K and L
# at once (a concurrency measured on several servers counts once, their mean), at 0.908, the mean of
# the three sessions' idle bench speeds (J 0.877, K 0.907, L 0.94: the meter's median over its first
# minute, before the server was up; L's own end bench ran beside the meter and read 0.571);
# guidance's on session I's guidance points, as before.
# usage: bash validation/h200-vllm-0.25.1/l/make_default.sh OUT.json.gz
set -eu
V=validation/h200-vllm-0.25.1; I=$V/i; T=$(mktemp -d)
SI=$(cat $I/speed.txt)
mkdir -p $T/probe && ln -s $PWD/$V/j/probe/* $PWD/$V/k/probe/* $PWD/$V/l/probe/* $T/probe/
python3 -m maskcost.cli report --sweep $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl $V/k/k1-calib.jsonl $V/k/k2-held.jsonl \
  $V/l/l1-calib.jsonl $V/l/l2-held.jsonl --probe $T/probe --cpu-speed 0.908 \
  --profile $V/e/profile-e-posthoc.json.gz --fit-engine-fill $T/x.json.gz --out $T/rx --title fit | grep wrote
python3 -m maskcost.cli report --backend guidance --sweep $I/i5-guidance-calib.jsonl $I/i5-guidance.jsonl \
  --probe $I/probe --cpu-speed $SI --profile $T/x.json.gz --fit-engine-fill $T/xg.json.gz --out $T/rg --title fit | grep wrote
python3 - "$T/xg.json.gz" "$1" <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
prov = {**p.provenance, "engine_fill": "validation/h200-vllm-0.25.1/l/make_default.sh: xgrammar from the probe "
        "of sessions J, K and L (all max-num-seqs 256 points, speed 0.908), guidance from session I's guidance points"}
save_profile(replace(p, name="h200-vllm-0.25.1-ijkl", provenance=prov), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
rm -rf "$T"
