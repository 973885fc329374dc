#!/bin/bash
# Session I predictions, written on the device after the calibration sweep and before any held-out
# request (session_i.sh runs this; the files' times say so).
# usage: bash validation/h200-vllm-0.25.1/i/predict_i.sh PROFILE CPU_SPEED OUTDIR [NAME...]
# (NAMEs: the sets below to write; default all)
# PROFILE: the embedded default with the engine-fill factors fitted on the calibration sweep's
# probe (report --fit-engine-fill), or the default itself (the bench-scaled model alone).
# CPU_SPEED: the profile host's bench_us / this host's (measured before the server started).
# Prompts as in sessions A, E and H: tier/flat 109 and tier/bounded 135 tokens (mean 122), of which
# 112 prefix-cached (model.config.prefix_cached_tokens).
set -eu
P=$1; SPEED=$2; O=$3; shift 3; ONLY=" $* "; mkdir -p "$O"
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --cpu-speed $SPEED"
pred() {
  local name=$1; shift; [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $name "* ]] || return 0
  python3 -m maskcost.cli predict --profile "$P" $S --json "$O/$name.json" "$@" > "$O/$name.txt" 2>&1
}
pred i2-on-short --concurrency 8 64 128 160 256                 # max-num-seqs 256: serial and pool points
pred i3-on-unique --unique-schemas --concurrency 1 8             # every request compiles a variant
pred i4-mns128 --max-num-seqs 128 --concurrency 160 256          # no pool; 128 rows at most
pred i5-guidance --backend guidance --concurrency 64 160         # llguidance in the engine
pred i7-taskset4 --cores 4 --cpu-count 16 --concurrency 64 160   # the server on 4 cores, the pool sized for 16
ls -la --time-style=full-iso "$O"
