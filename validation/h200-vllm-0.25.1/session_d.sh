#!/bin/bash
# Device session D (H200, vLLM 0.25.1, Llama-3-8B architecture, random weights): the held-out
# configurations of issue 4, each predicted before this ran (d/predict_before.sh, committed first).
# Run from the repository root on the device after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_d.sh CONFIG...   (CONFIG: mns128 guidance taskset4 ngram3 sync)
# Each CONFIG restarts the server with its flags, sweeps, and leaves $OUT/d-CONFIG.tar.gz (re-packed
# after every step, so a call cut short still returns what finished). DEADLINE_S bounds the call.
set -u
DEADLINE_S=${DEADLINE_S:-585}
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000; CL=${CL:-taskset -c 15}   # the client on its own core
SRV=${SRV:-.device-stage/b/serve_vllm.sh}
WS="--structured-outputs-config.disable_any_whitespace true"   # random weights: no free whitespace
T="--tier flat bounded"
left() { echo $(( DEADLINE_S - SECONDS )); }
step() {  # step PLANNED_S LOGNAME command...: run with the smaller of PLANNED_S and what is left
  local plan=$1 log=$2; shift 2
  local t=$(left); [ "$t" -gt "$plan" ] && t=$plan
  [ "$t" -lt 20 ] && { echo "skipped: $log (${t}s left)" >> "$R/skipped.txt"; return 1; }
  echo "$(date -u +%FT%TZ) [$SECONDS s] $log ($t s): $*" >> "$R/steps.txt"
  timeout "$t" "$@" > "$R/$log.log" 2>&1; echo "rc $?" >> "$R/steps.txt"
}
pack() { gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/d-$1.tar.gz" "d/$1"; }
serve() {  # serve [taskset-prefix...] -- BACKEND MNS flags...
  step 240 serve "$@" || return 1
  grep -q "vLLM up" "$R/serve.log" || { pack "$C"; return 1; }
  { echo "server pid $(cat /tmp/vllm.pid)"; taskset -p "$(cat /tmp/vllm.pid)"; nproc; } >> "$R/host.txt" 2>&1
}
sweep() {  # sweep NAME PLANNED_S LABEL sweep-args...
  local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label" "$@"
  pack "$C"
}
for C in "$@"; do
  R=$OUT/d/$C; mkdir -p "$R"
  { nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$R/host.txt" 2>&1
  case $C in
    mns128)
      serve bash $SRV xgrammar 128 $WS || continue
      sweep on 200 "xgrammar mns128 async" --arms on $T --concurrency 128 160 256 --repeats 2
      sweep off 60 "xgrammar mns128 async" --arms off --concurrency 160 256 --off-tokens 96 ;;
    guidance)
      serve bash $SRV guidance 256 $WS || continue
      sweep on 240 "guidance mns256 async" --arms on $T --concurrency 1 8 32 128 160 256 --repeats 2 ;;
    taskset4)
      serve taskset -c 0-3 bash $SRV xgrammar 256 $WS || continue
      sweep on 240 "xgrammar mns256 async, server taskset -c 0-3 (cpu_count 16)" --arms on $T \
        --concurrency 8 64 160 256 --repeats 2 ;;
    ngram3)
      serve bash $SRV xgrammar 256 $WS --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}' || continue
      sweep on 200 "xgrammar mns256 ngram k=3 (async off by vLLM)" --arms on $T --concurrency 1 8 64 256
      sweep off 80 "xgrammar mns256 ngram k=3 (async off by vLLM)" --arms off --concurrency 1 8 64 256 --off-tokens 96 ;;
    sync)
      serve bash $SRV xgrammar 256 $WS --no-async-scheduling || continue
      sweep off 90 "xgrammar mns256 no-async-scheduling" --arms off --concurrency 1 8 32 64 128 256 --off-tokens 96
      sweep on 150 "xgrammar mns256 no-async-scheduling" --arms on $T --concurrency 8 64 128 160 256 ;;
    *) echo "unknown config $C" > "$R/steps.txt" ;;
  esac
  pack "$C"
done
