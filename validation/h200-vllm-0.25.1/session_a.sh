#!/bin/bash
# Device session A (H200, vLLM 0.25.1, Llama-3-8B architecture, random weights), run from the
# repository root on the device machine after `cp .device-stage/a/part00 /tmp/stage-part00`.
# 1. vLLM up: xgrammar, max-num-seqs 256, disable_any_whitespace (random weights).
# 2. Schema-off sweep (the forward curve: the only engine-side input to the model).
# 3. Host calibration on the device's CPU while the server idles (fill traces, compile, pools,
#    GPU mask apply), forward curve from step 2.
# 4. Schema-on sweep, two bounded schema shapes (validation points: nothing is fitted to them).
# 5. Unique schemas at low concurrency (held out).
# 6. Replay of the recorded outputs through both backends (fill traces of the real outputs).
set -u
R=$OUT/a; mkdir -p $R
pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > $R/pip.log 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/host.txt 2>&1
bash .device-stage/b/serve_vllm.sh xgrammar 256 --structured-outputs-config.disable_any_whitespace true > $R/serve.log 2>&1 || { cp /tmp/vllm.log $R/; exit 1; }
U=http://127.0.0.1:8000
CL="taskset -c 15"   # the client on its own core
timeout 150 $CL $MC sweep --base-url $U --arms off --concurrency 1 8 32 64 128 160 192 256 --off-tokens 96 \
  --out $R/off.jsonl --label "xgrammar mns256 async" > $R/off.log 2>&1
timeout 170 $MC calibrate --out $R/profile-host.json.gz --name h200-vllm-0.25.1 --tokenizer llama3 \
  --tier flat nested deep bounded --corpus .device-wheels/corpus40.jsonl.gz --forward-sweep $R/off.jsonl \
  --engine-note "vLLM 0.25.1 serve --load-format dummy --max-num-seqs 256 --structured-outputs-config.backend xgrammar --structured-outputs-config.disable_any_whitespace true, TP=1, H200" \
  > $R/calibrate.log 2>&1
timeout 160 $CL $MC sweep --base-url $U --arms on --tier flat bounded --concurrency 1 8 32 64 128 160 192 256 \
  --out $R/on.jsonl --label "xgrammar mns256 async" > $R/on.log 2>&1
timeout 45 $CL $MC sweep --base-url $U --arms on --tier flat bounded --concurrency 1 8 --unique-schemas \
  --out $R/unique.jsonl --label "xgrammar mns256 async unique" > $R/unique.log 2>&1
timeout 60 $MC calibrate --out $R/profile-replay.json.gz --name h200-vllm-0.25.1-replay --tokenizer llama3 \
  --tier flat bounded --outputs $R/on.raw.jsonl --engine-from $R/profile-host.json.gz > $R/replay.log 2>&1
cp /tmp/vllm.log $R/vllm.log
