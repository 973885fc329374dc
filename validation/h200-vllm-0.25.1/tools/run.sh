#!/bin/bash
# The tool-calling live check (issue 24 item 3), registered in README.md here before it ran: a fresh
# device machine, maskcost from its wheel, vLLM 0.25.1 with a tool parser on its JSON-schema path, then
# the README's three GPU-host commands with --tools in place of --schema, tool_choice=required.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00` (a first call):
#   bash validation/h200-vllm-0.25.1/tools/run.sh
set -u
ROOT=$PWD; R=$OUT/tools; mkdir -p "$R"
T="$ROOT/validation/h200-vllm-0.25.1/tools/tools.json"
U=http://127.0.0.1:8000
HELD="8 64 160"   # tool-call loads the calibration never ran (its speed sweep: 48 96 144 224)
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
pack() { gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/tools.tar.gz" tools; }
run() { local t=$1 log=$2; shift 2; note "$log: $*"; (cd "$R" && timeout "$t" "$@" > "$R/$log.log" 2>&1); note "rc $?"; pack; }
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl > "$R/pip.log" 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc
MC="python3 -m maskcost.cli"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv;
  ls .device-stage/w; git -C "$ROOT" log -1 --format=%H 2>/dev/null; } > "$R/host.txt" 2>&1
# the JSON-schema path of vLLM's tool calling: a parser, and strict tool calling off (its structural tag is
# not modelled): maskcost/calibrate/tools.py
run 300 serve env STAGE="$ROOT/.device-stage" VLLM_ENFORCE_STRICT_TOOL_CALLING=0 bash "$ROOT/.device-stage/b/serve_vllm.sh" \
    xgrammar 256 --structured-outputs-config.disable_any_whitespace true --enable-auto-tool-choice --tool-call-parser pythonic
run 400 calibrate $MC calibrate --base-url $U --tokenizer /tmp/llama3-8b --tools "$T" --out host.json.gz
run 30 check $MC calibrate --check host.json.gz
ID=$(python3 -c "import sys; sys.path[:0]=['/tmp/mc']; from maskcost.calibrate.tools import tool_entry; print(tool_entry('$T', 'required').schema_id)")
run 60 predict $MC predict --profile host.json.gz --schema-id "$ID" --concurrency $HELD --json predicted.json
run 240 validate $MC validate --profile host.json.gz --base-url $U --tools "$T" --concurrency $HELD --repeats 1 --out val
run 60 score $MC report --profile host.json.gz --sweep val/sweep.jsonl --predicted predicted.json --out val-predicted
pack
