#!/bin/bash
# The bench modes (README.md here), one device call after the staging call `cp .device-stage/a/part00 /tmp/stage-part00`,
# from the repository root: bash validation/h200-vllm-0.25.1/benchmodes/run.sh   (results: $OUT/benchmodes.tar.gz)
set -u
R=/tmp/benchmodes; mkdir -p $R
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl || exit 1
if [ ! -d /tmp/site ]; then
  cat /tmp/stage-part00 .device-stage/b/part0* > /tmp/bundle.tar.xz || exit 1
  mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/bundle.tar.xz && mv /tmp/x/site /tmp/site && mv /tmp/x/llama3-8b /tmp/llama3-8b
fi
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz"; cat /sys/fs/cgroup/cpu.max 2>/dev/null;
  nvidia-smi --query-gpu=name --format=csv,noheader; ls .device-stage/w; } > $R/host.txt 2>&1
PYTHONPATH=/tmp/site:/tmp/mc timeout 420 python3 validation/h200-vllm-0.25.1/benchmodes/bench_modes.py $R /tmp/llama3-8b \
  > $R/bench.log 2>&1; echo "rc $?" >> $R/bench.log
tar -C /tmp -czf "$OUT/benchmodes.tar.gz" benchmodes
