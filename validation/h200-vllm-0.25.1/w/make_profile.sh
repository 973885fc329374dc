#!/bin/bash
# Session W's profile (written before W, after V was scored): the embedded default (ijm) with its xgrammar
# engine step refitted from server u1's probe (`report --probe --fit-engine-fill` at u1's median ITL speed
# against the default, 0.894: the fill factors, the pool's excess, and the engine thread's work per step)
# with --fit-with-loop: that work includes the engine core's busy loop outside step_with_batch_queue (new:
# on U and V's servers 0.8 ms a step at 8 to 2.7 at 256, which the four probed calls left out). Guidance
# unchanged (refitted from u2 it scored worse on the other guidance servers: 10.1% -> 13.9%, README).
# And a second profile, profile-u1rows.json.gz, the same with --fit-serial-by-rows: the serial fill factor a
# power law in the step's rows fitted over u1's serial points (x0.935 at the points' geometric mean, exponent
# -0.087: more per row at 8 than at 128), scored in W beside the first, not as its primary.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/w/make_profile.sh
set -eu
V=validation/h200-vllm-0.25.1; T=$(mktemp -d)
fit() {  # fit NAME LABEL [FLAGS]: u1's refit onto the embedded default, saved as w/profile-NAME.json.gz
  local name=$1 label=$2; shift 2
  python3 -m maskcost.cli report --sweep $V/u/u1-open.jsonl $V/u/u1.jsonl --probe $V/u/probe --backend xgrammar \
    --max-num-seqs 256 --cores 14 --cpu-count 16 --cpu-speed 0.894 --fit-engine-fill $T/$name.json.gz --fit-with-loop "$@" \
    --out $T/r-$name --title fit | grep "^wrote $T/$name.json.gz" | sed "s#$T/##"
  python3 - "$T/$name.json.gz" $V/w/profile-$name.json.gz "$name" "$label" <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
save_profile(replace(p, name=f"h200-vllm-0.25.1-{sys.argv[3]}", provenance={**p.provenance, "engine_fill": p.provenance[
    "engine_fill"] + f"; xgrammar's refitted from session U's server u1 with {sys.argv[4]} "
    "(validation/h200-vllm-0.25.1/w/make_profile.sh)"}), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
}
fit u1loop "the busy loop's time"
fit u1rows "the busy loop's time and the serial factor by rows" --fit-serial-by-rows
rm -rf "$T"
