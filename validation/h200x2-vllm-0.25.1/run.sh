#!/bin/bash
# Issue 40 on an nvidia-h200-x2 machine (2 H200s, 32 cores; README.md here: cells, order, rule). From the
# repository root, after a first call `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200x2-vllm-0.25.1/run.sh dp   # two engines, a GPU each: on cores 0-23, then both on cores 0-7
#   bash validation/h200x2-vllm-0.25.1/run.sh tp   # one engine over both GPUs (--tensor-parallel-size 2), and TP=1
# NVLink multicast stays off (the device's KINDS.md). Sweeps go to /tmp/x2/CELL-*.jsonl, packed into $OUT.
set -u
PHASE=$1; D=$PWD/validation/h200x2-vllm-0.25.1; R=/tmp/x2; mkdir -p $R
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
pack() { tar -C /tmp --exclude='*.log' -czf "$OUT/x2-$PHASE.tar.gz" x2; }
. "$PWD/validation/h200-vllm-0.25.1/replicas/engines.sh"
export MNS=512 GPU_UTIL=0.85 CLIENT_PROCS=4
stop() { pkill -f vllm.entrypoints.cli.main; sleep 10; }
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/host.txt 2>&1
if [ "$PHASE" = dp ]; then
  for cores in 0-23 0-7; do  # (the clients: cores 24-31, and 16-31 beside the 8-core cell)
    stop
    CUDA_VISIBLE_DEVICES=0 serve A 8000 $cores; CUDA_VISIBLE_DEVICES=1 serve B 8001 $cores
    up A 8000 && up B 8001 || { pack; exit 1; }
    n=$([ $cores = 0-23 ] && echo 24 || echo 8); cl=$([ $cores = 0-23 ] && echo 24-31 || echo 16-31)
    for arm in on off; do for c in 64 192 512; do  # each together point bracketed by A alone before and after
      sweep alone$n-1 8000 $cl $c $arm
      sweep together$n-a 8000 $cl $c $arm & a=$!; sweep together$n-b 8001 $cl $c $arm & b=$!; wait $a $b
      sweep alone$n-2 8000 $cl $c $arm
      pack
    done; done
  done
else
  stop; CUDA_VISIBLE_DEVICES=0,1 serve TP2 8000 0-23 --tensor-parallel-size 2; up TP2 8000 || { pack; exit 1; }
  for arm in off on; do for c in 64 192 512; do sweep tp2 8000 24-31 $c $arm; pack; done; done
  stop; CUDA_VISIBLE_DEVICES=0 serve TP1 8000 0-23; up TP1 8000 || { pack; exit 1; }
  for arm in off on; do for c in 64 192 512; do sweep tp1 8000 24-31 $c $arm; pack; done; done
fi
stop; pack; ls $R
