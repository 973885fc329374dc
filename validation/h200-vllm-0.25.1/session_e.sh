#!/bin/bash
# Device session E (H200, vLLM 0.25.1, Llama-3-8B architecture, random weights, xgrammar,
# max-num-seqs 256, async scheduling): prompts. Calibrate the prefill and context terms of the
# forward time, predict held-out prompt configurations on the device (e/predict_e.sh, before any
# held-out request), then measure them.
# Run from the repository root on the device after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_e.sh calib   (serve, calibration sweeps, profile, predictions, H1-H3)
#   bash validation/h200-vllm-0.25.1/session_e.sh more    (H4, H5, repeats of H1-H3 for the spread)
# Every step appends to $OUT/e-PHASE.tar.gz (re-packed after each), so a call cut short returns what finished.
set -u
DEADLINE_S=${DEADLINE_S:-585}
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000; CL="taskset -c 15"
SRV=.device-stage/b/serve_vllm.sh
WS="--structured-outputs-config.disable_any_whitespace true"
T="--tier flat bounded"
LONG="--rounds 6 --min-requests 32"
PH=$1; R=$OUT/e; mkdir -p "$R"
[ -d /tmp/e-keep ] && cp /tmp/e-keep/h*.jsonl "$R"/ 2>/dev/null  # an earlier phase on this machine: sweeps resume
left() { echo $(( DEADLINE_S - SECONDS )); }
pack() {  # what finished goes back now; a copy stays on the machine for the next phase's resume
  gzip -c /tmp/vllm.log > "$R/vllm-$PH.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/e-$PH.tar.gz" e
  mkdir -p /tmp/e-keep && cp -r "$R"/. /tmp/e-keep/
}
step() {  # step PLANNED_S LOGNAME command...
  local plan=$1 log=$2; shift 2
  local t=$(left); [ "$t" -gt "$plan" ] && t=$plan
  [ "$t" -lt 20 ] && { echo "skipped: $log (${t}s left)" >> "$R/skipped.txt"; return 1; }
  echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $log ($t s): $*" >> "$R/steps.txt"
  timeout "$t" "$@" > "$R/$log.log" 2>&1; echo "rc $? at $(date -u +%FT%T.%3NZ)" >> "$R/steps.txt"
  pack
}
sweep() {  # sweep NAME PLANNED_S sweep-args...
  local name=$1 plan=$2; shift 2
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar mns256 async, session E" "$@"
}
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$R/host-$PH.txt" 2>&1
if ! curl -sf $U/health > /dev/null; then
  step 240 serve-$PH bash $SRV xgrammar 256 $WS
  grep -q "vLLM up" "$R/serve-$PH.log" || exit 1
fi
grep -m3 -E "max_num_batched_tokens|Initializing a V1" /tmp/vllm.log | cut -c1-400 > "$R/engine-config.txt"
case $PH in
  calib)
    sweep e1-off-short 90 --arms off --concurrency 1 8 32 64 128 160 192 256 --off-tokens 96 $LONG
    for n in 500 1500 3000; do
      sweep e2-prefill$n 30 --arms off --concurrency 1 --min-requests 16 --off-tokens 8 --prompt-pad $n --unique-prompts
    done
    sweep e3-context2000 60 --arms off --concurrency 8 64 256 --off-tokens 96 $LONG --prompt-pad 2000
    step 60 calibrate $MC calibrate --engine-only --engine-from maskcost/profiles/default.json.gz \
      --forward-sweep "$R/e1-off-short.jsonl" --prefill-sweep "$R"/e2-prefill{500,1500,3000}.jsonl \
      --context-sweep "$R/e3-context2000.jsonl" --name h200-vllm-0.25.1-e --out "$R/profile-e.json.gz" \
      --engine-note "vLLM 0.25.1 serve --load-format dummy --max-num-seqs 256 xgrammar disable_any_whitespace, max_num_batched_tokens 8192, prefix caching on, TP=1, H200, client pinned to core 15"
    [ -f "$R/profile-e.json.gz" ] || exit 1
    step 90 predict bash validation/h200-vllm-0.25.1/e/predict_e.sh "$R/profile-e.json.gz" "$R/predicted"
    sweep h1-off-unique1000 60 --arms off --concurrency 8 32 128 --off-tokens 96 $LONG --prompt-pad 1000 --unique-prompts
    sweep h2-off-shared3000 45 --arms off --concurrency 32 128 --off-tokens 96 $LONG --prompt-pad 3000
    sweep h3-on-shared1000 90 --arms on $T --concurrency 8 64 192 $LONG --prompt-pad 1000 ;;
  more)
    sweep h4-on-unique 70 --arms on $T --concurrency 1 8 --rounds 8 --min-requests 32 --repeats 2 --unique-schemas
    sweep h5-on-short 300 --arms on $T --concurrency 8 32 64 160 256 --rounds 8 --min-requests 32 --repeats 2
    # second repeats (the sweep resumes: only the r1 points run)
    sweep h1-off-unique1000 60 --arms off --concurrency 8 32 128 --off-tokens 96 $LONG --prompt-pad 1000 --unique-prompts --repeats 2
    sweep h3-on-shared1000 90 --arms on $T --concurrency 8 64 192 $LONG --prompt-pad 1000 --repeats 2
    sweep h2-off-shared3000 45 --arms off --concurrency 32 128 --off-tokens 96 $LONG --prompt-pad 3000 --repeats 2 ;;
esac
pack
