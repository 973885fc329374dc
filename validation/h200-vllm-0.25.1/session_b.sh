#!/bin/bash
# Device session B: host-side calibration on the device's CPU (16-core Xeon) with the engine's own
# xgrammar 0.2.7 / llguidance 1.7.6 and the GPU mask-apply cost; forward curve from session A's
# schema-off sweep; the recorded outputs of session A's schema-on sweep replayed for the two
# validation schemas. No server runs.
set -u
R=$OUT/${SESSION:-b}; mkdir -p $R
if [ ! -d /tmp/site ]; then
  cat /tmp/stage-part00 .device-stage/b/part0* > /tmp/bundle.tar.xz && mkdir -p /tmp/x && \
  tar -C /tmp/x -xJf /tmp/bundle.tar.xz && mv /tmp/x/site /tmp/site && mv /tmp/x/llama3-8b /tmp/llama3-8b
fi
pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > $R/pip.log 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
A=validation/h200-vllm-0.25.1/a
timeout 420 python3 -m maskcost.cli calibrate --out $R/profile.json.gz --name h200-vllm-0.25.1 --tokenizer llama3 \
  --tier flat nested deep bounded --corpus .device-wheels/corpus40.jsonl.gz --outputs $A/on.raw.jsonl.gz --traces-per-schema ${TRACES_PER_SCHEMA:-16} \
  --forward-sweep $A/off.jsonl \
  --engine-note "vLLM 0.25.1 serve --load-format dummy --max-num-seqs 256 --structured-outputs-config.backend xgrammar --structured-outputs-config.disable_any_whitespace true, TP=1, H200, client pinned to core 15" \
  > $R/calibrate.log 2>&1
echo "calibrate rc=$?" >> $R/calibrate.log
