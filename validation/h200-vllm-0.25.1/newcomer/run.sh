#!/bin/bash
# The newcomer run (issue 20): a fresh device machine, maskcost installed from its wheel, vLLM up as
# ../shared/device says, then only the README's three GPU-host commands with three bounded schemas
# that have no examples (schemas/). Pre-registered in README.md here before it ran.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/newcomer/run.sh calib      (serve, calibrate, check, predict)
#   bash validation/h200-vllm-0.25.1/newcomer/run.sh validate   (validate on the held-out loads, score)
set -u
PH=$1; ROOT=$PWD; R=$OUT/newcomer; KEEP=/tmp/newcomer-keep; mkdir -p "$R"
[ -d "$KEEP" ] && cp -r "$KEEP"/. "$R"/
S="$ROOT/validation/h200-vllm-0.25.1/newcomer/schemas"
SCHEMAS="$S/contact.json $S/order.json $S/review.json"
U=http://127.0.0.1:8000
HELD="8 32 64 128 160 256"   # schema-on loads the calibration never ran (its speed sweep: 96 192)
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
pack() { gzip -c /tmp/vllm.log > "$R/vllm-$PH.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/newcomer-$PH.tar.gz" newcomer
         mkdir -p "$KEEP" && cp -r "$R"/. "$KEEP"/; }
run() { local t=$1 log=$2; shift 2; note "$log: $*"; (cd "$R" && timeout "$t" "$@" > "$R/$log.log" 2>&1); note "rc $?"; pack; }
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl > "$R/pip.log" 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc   # vLLM's packages (xgrammar 0.2.7, llguidance 1.7.6), maskcost's wheel
MC="python3 -m maskcost.cli"          # run from $R: the wheel, not the checkout
case $PH in
  calib)
    { nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv;
      python3 -m pip show maskcost 2>/dev/null | head -2; ls .device-stage/w; } > "$R/host.txt" 2>&1
    run 300 serve env STAGE="$ROOT/.device-stage" bash "$ROOT/.device-stage/b/serve_vllm.sh" xgrammar 256 --structured-outputs-config.disable_any_whitespace true
    run 420 calibrate $MC calibrate --base-url $U --tokenizer /tmp/llama3-8b --schema $SCHEMAS --out host.json.gz
    run 30 check $MC calibrate --check host.json.gz
    run 120 predict $MC predict --profile host.json.gz --schema-id contact order review --concurrency $HELD \
        --json predicted.json ;;
  validate)
    run 480 validate $MC validate --profile host.json.gz --base-url $U --schema $SCHEMAS --concurrency $HELD \
        --repeats 1 --out val
    run 100 score $MC report --profile host.json.gz --sweep val/sweep.jsonl --predicted predicted.json --out val-predicted ;;
esac
pack
