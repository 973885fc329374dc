#!/bin/bash
# Device session F (H200, vLLM 0.25.1, Llama-3-8B architecture, random weights, xgrammar,
# max-num-seqs 256, async scheduling): the client spread over 4 processes (--client-procs), to lift
# the one-process limit (about 15k streamed tokens/s) that held session E's schema-off arm to ~124
# running requests at offered 256 and inflated its TTFT. Predictions: f/predict_f.sh, committed before.
# Run from the repository root on the device after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_f.sh
set -u
DEADLINE_S=${DEADLINE_S:-585}
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000
SRV=.device-stage/b/serve_vllm.sh
WS="--structured-outputs-config.disable_any_whitespace true"
T="--tier flat bounded"
R=$OUT/f; mkdir -p "$R"
left() { echo $(( DEADLINE_S - SECONDS )); }
pack() { gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/f.tar.gz" f; }
step() {  # step PLANNED_S LOGNAME command...
  local plan=$1 log=$2; shift 2
  local t=$(left); [ "$t" -gt "$plan" ] && t=$plan
  [ "$t" -lt 20 ] && { echo "skipped: $log (${t}s left)" >> "$R/skipped.txt"; return 1; }
  echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $log ($t s): $*" >> "$R/steps.txt"
  timeout "$t" "$@" > "$R/$log.log" 2>&1; echo "rc $? at $(date -u +%FT%T.%3NZ)" >> "$R/steps.txt"
  pack
}
sweep() {  # sweep NAME PLANNED_S CPUS sweep-args...
  local name=$1 plan=$2 cpus=$3; shift 3
  step "$plan" "$name" taskset -c $cpus $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar mns256 async, session F" "$@"
}
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$R/host.txt" 2>&1
step 240 serve bash $SRV xgrammar 256 $WS
grep -q "vLLM up" "$R/serve.log" || exit 1
L="--rounds 6 --min-requests 32"
sweep fa-off-short 100 12-15 --arms off --concurrency 1 8 32 64 128 192 256 --off-tokens 96 $L --client-procs 4
sweep fb-off-short-1proc 40 15 --arms off --concurrency 128 256 --off-tokens 96 $L
sweep fc-off-unique1000 60 12-15 --arms off --concurrency 32 128 --off-tokens 96 $L --prompt-pad 1000 --unique-prompts --client-procs 4
sweep fd-on-short 300 12-15 --arms on $T --concurrency 8 64 160 256 --rounds 8 --min-requests 32 --repeats 2 --client-procs 2
pack
