#!/bin/bash
# Device session J (the session's last ~9 min of device time): session I's protocol with the engine
# thread's own per-step work in the model (EngineFill.cpu_points, fitted from the probe). On one
# fresh server with the probe: bench; a calibration sweep at concurrency 8, 96 and 192 fits the
# engine fill (serial, pool factors and the engine-CPU curve) onto the embedded default profile;
# the held-out points 64, 128, 160, 256 are predicted on the device before they run; then 64
# again (the drift over the session) and the bench again.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_j.sh run
set -u
DEADLINE_S=${DEADLINE_S:-540}
PH=$1; R=$OUT/j; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112"
sweep() { local name=$1 plan=$2; shift 2
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar mns256 async, session J" "$@"; }
host_info host.txt
unpack_with_probe
bench bench-start
step 200 serve env MASKCOST_PROBE_DIR="$R/probe" bash $SRV xgrammar 256 $WS
grep -q "vLLM up" "$R/serve.log" || exit 1
sweep j1-calib 90 --arms on $T --concurrency 8 96 192 $LONG
step 40 fit $MC report --sweep "$R/j1-calib.jsonl" --probe "$R/probe" --cpu-speed "$SPEED" \
  --fit-engine-fill "$R/profile-j.json.gz" --out "$R/report-calib" --title "Session J calibration (fitted)"
step 40 predict $MC predict --profile "$R/profile-j.json.gz" $S --cpu-speed "$SPEED" --concurrency 64 128 160 256 \
  --json "$R/predicted-j.json"
note "held out from here"
sweep j2-on-short 170 --arms on $T --concurrency 64 128 160 256 $LONG
sweep j2-on-short 50 --arms on $T --concurrency 64 $LONG --repeats 2
bench bench-end
pack
