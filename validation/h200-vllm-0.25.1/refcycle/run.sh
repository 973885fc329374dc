#!/bin/bash
# Issue 38's exercise 4 on the device (README.md here). From the repository root, after a first call
# `cp .device-stage/a/part00 /tmp/stage-part00`:  bash validation/h200-vllm-0.25.1/refcycle/run.sh
# vLLM with xgrammar's cache as shipped, the sequences; restarted with VLLM_XGRAMMAR_CACHE_MB=0, again.
set -u
D=$PWD/validation/h200-vllm-0.25.1/refcycle; R=/tmp/refc; mkdir -p $R
FLAGS="--structured-outputs-config.disable_any_whitespace true"
pack() { tar -C /tmp -czf "$OUT/refcycle.tar.gz" refc; }
{ nproc; lscpu | grep -E "Model name"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/host.txt 2>&1
bash .device-stage/b/serve_vllm.sh xgrammar 256 $FLAGS > $R/serve-cache512.log 2>&1 || { cat $R/serve-cache512.log; pack; exit 1; }
PYTHONPATH=/tmp/site python3 $D/seq.py cache512 $R/ttft.jsonl; gzip -c /tmp/vllm.log > $R/vllm-cache512.log.gz; pack
VLLM_XGRAMMAR_CACHE_MB=0 bash .device-stage/b/serve_vllm.sh xgrammar 256 $FLAGS > $R/serve-cache0.log 2>&1 || { cat $R/serve-cache0.log; pack; exit 1; }
PYTHONPATH=/tmp/site python3 $D/seq.py cache0 $R/ttft.jsonl; gzip -c /tmp/vllm.log > $R/vllm-cache0.log.gz; pack
