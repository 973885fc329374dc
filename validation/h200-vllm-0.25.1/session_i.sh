#!/bin/bash
# Device session I (H200, vLLM 0.25.1, Llama-3-8B architecture, random weights): the engine timed
# from inside. The server runs with maskcost's probe (validate/probe.py as sitecustomize.py, records
# under $OUT/i/probe), so each step's fill, pool wait, update and launch are measured where vLLM
# runs them. Pre-registered: this host's single-thread benchmark scales the CPU side; one
# calibration sweep (xgrammar, concurrency 96 and 192) fits the engine-fill factors (in-engine
# fill / the model's, serial and pool); predictions for the held-out points are written on the
# device before any of them runs (i/predict_i.sh).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_i.sh calib   (bench, serve, calibrate, predict, held-out)
#   bash validation/h200-vllm-0.25.1/session_i.sh more    (max-num-seqs 128, guidance, schema-off TTFT)
set -u
DEADLINE_S=${DEADLINE_S:-585}
PH=$1; R=$OUT/i; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
sweep() {  # sweep NAME PLANNED_S LABEL sweep-args...
  local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label, session I" "$@"
}
serve() {  # serve BACKEND MNS: restart the server with the probe recording into $R/probe
  step 200 "serve-$1-$2" env MASKCOST_PROBE_DIR="$R/probe" bash $SRV "$1" "$2" $WS
  grep -q "vLLM up" "$R/serve-$1-$2.log"
}
host_info host-$PH.txt
case $PH in
  calib)
    unpack_with_probe
    bench bench   # idle machine, before the server
    echo "$SPEED" > "$R/speed.txt"
    serve xgrammar 256 || exit 1
    grep -m3 -E "max_num_batched_tokens|Initializing a V1" /tmp/vllm.log | cut -c1-400 > "$R/engine-config.txt"
    sweep i1-calib 90 "xgrammar mns256 async" --arms on $T --concurrency 96 192 $LONG
    step 60 fit $MC report --sweep "$R/i1-calib.jsonl" --probe "$R/probe" --cpu-speed "$SPEED" \
      --fit-engine-fill "$R/profile-i.json.gz" --out "$R/report-calib" --title "Session I calibration (fitted)"
    [ -f "$R/profile-i.json.gz" ] || { note "no fitted profile: predictions from the default only"; }
    step 90 predict-fitted bash validation/h200-vllm-0.25.1/i/predict_i.sh "$R/profile-i.json.gz" "$SPEED" "$R/predicted"
    step 90 predict-default bash validation/h200-vllm-0.25.1/i/predict_i.sh maskcost/profiles/default.json.gz "$SPEED" "$R/predicted-default"
    note "held out from here"
    sweep i2-on-short 150 "xgrammar mns256 async" --arms on $T --concurrency 8 64 128 160 256 $LONG
    sweep i3-on-unique 60 "xgrammar mns256 async" --arms on $T --concurrency 1 8 --rounds 8 --min-requests 32 --unique-schemas
    sweep i2-on-short 150 "xgrammar mns256 async" --arms on $T --concurrency 64 160 256 $LONG --repeats 2 ;;
  more)
    SPEED=$(cat "$R/speed.txt")
    serve xgrammar 128 && sweep i4-mns128 70 "xgrammar mns128 async" --arms on $T --concurrency 160 256 $LONG
    serve guidance 256 && {
      # guidance's own engine-fill factors, fitted like xgrammar's, then its held-out points predicted
      # again with them (predicted/i5-guidance.json, written in the calib phase, has guidance unfitted)
      sweep i5-guidance-calib 90 "guidance mns256 async" --arms on $T --concurrency 96 192 --rounds 4 --min-requests 32
      step 60 fit-guidance $MC report --backend guidance --sweep "$R/i5-guidance-calib.jsonl" --probe "$R/probe" \
        --cpu-speed "$SPEED" --profile "$R/profile-i.json.gz" --fit-engine-fill "$R/profile-ig.json.gz" \
        --out "$R/report-guidance-calib" --title "Session I guidance calibration (fitted)"
      step 60 predict-guidance bash validation/h200-vllm-0.25.1/i/predict_i.sh "$R/profile-ig.json.gz" "$SPEED" \
        "$R/predicted-guidance-fitted" i5-guidance
      note "held out from here"
      sweep i5-guidance 90 "guidance mns256 async" --arms on $T --concurrency 64 160 --rounds 4 --min-requests 32
      sweep i6-off 60 "guidance mns256 async (schema off)" --arms off --concurrency 64 256 --off-tokens 96 $LONG; } ;;
  taskset4)   # the unseen CPU: the server on 4 cores (taskset) while vLLM sizes its pools from cpu_count 16
    SPEED=$(cat "$R/speed.txt")
    step 60 predict-taskset4 bash validation/h200-vllm-0.25.1/i/predict_i.sh "$R/profile-i.json.gz" "$SPEED" "$R/predicted" i7-taskset4
    step 60 predict-taskset4-default bash validation/h200-vllm-0.25.1/i/predict_i.sh maskcost/profiles/default.json.gz "$SPEED" "$R/predicted-default" i7-taskset4
    note "held out from here"
    step 200 serve-taskset4 taskset -c 0-3 env MASKCOST_PROBE_DIR="$R/probe" bash $SRV xgrammar 256 $WS && \
      sweep i7-taskset4 150 "xgrammar mns256 async, server on cores 0-3" --arms on $T --concurrency 64 160 $LONG ;;
esac
pack
