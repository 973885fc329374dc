#!/bin/bash
# Issue 36 (a), a third time, on the device (README.md here: what runs, the rule). From the repository root,
# after a first call `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/transfer3/run.sh     (again in the next call: the campaigns resume)
# One vLLM server (xgrammar) on all 16 cores; campaign 1 (calibrate --base-url, predict, validate at 8 64 160
# 256); then the same server moved to cores 0-5 (taskset -a on every thread: its OpenMP team stays 16), the
# client on cores 6-15, campaign 2 (run 1's profile, --cores 6 --omp-threads 16, validate at 32 128 256).
# The 6-core campaign starts only where this call has $LEFT s (default 200) before $DEADLINE (default 560).
# Results packed into $OUT/transfer3.tar.gz after every step.
set -u
T0=$(date +%s); ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/transfer3; R=${T3:-/tmp/t3}; mkdir -p $R
pack() { for n in xg; do [ -f $R/$n.log ] && gzip -c $R/$n.log > $R/$n.log.gz; done
  tar -C "$(dirname $R)" --exclude=xg.log -czf "$OUT/transfer3.tar.gz" "$(basename $R)"; }
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
mc() { python3 -m maskcost.cli "$@"; }
[ -f $R/host.txt ] || { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA";
  nvidia-smi --query-gpu=name,driver_version --format=csv; ls .device-stage/w; } > $R/host.txt 2>&1
if ! curl -sf http://127.0.0.1:8000/health >/dev/null; then
  GPU_UTIL=0.9 serve xg 8000 0-15; up xg 8000 >> $R/steps.txt || { pack; exit 1; }
  echo "$(date +%T) server up after $(( $(date +%s) - T0 )) s" >> $R/steps.txt
fi
if [ ! -f $R/run1-16cores/score.json ]; then
  mc campaign run $D/campaign-16cores.json --base-url http://127.0.0.1:8000 --out $R/run1-16cores \
    > $R/campaign1.log 2>&1
  rc=$?; echo "$(date +%T) campaign 16 cores rc $rc after $(( $(date +%s) - T0 )) s" >> $R/steps.txt; pack
  [ $rc = 0 ] || exit 1
fi
mkdir -p $D/run1-16cores && cp $R/run1-16cores/host.json.gz $D/run1-16cores/host.json.gz
if [ ! -f $R/run2-6cores/score.json ]; then
  [ $(( $(date +%s) - T0 )) -gt $(( ${DEADLINE:-560} - ${LEFT:-200} )) ] && {
    echo "$(date +%T) stopped before the 6-core campaign (run again)" >> $R/steps.txt; pack; exit 0; }
  for p in $(pgrep -s "$(cat $R/xg.pid)"); do taskset -a -p -c 0-5 $p; done > $R/taskset.txt 2>&1
  taskset -c 6-15 python3 -m maskcost.cli campaign run $D/campaign-6cores.json --base-url http://127.0.0.1:8000 \
    --out $R/run2-6cores > $R/campaign2.log 2>&1
  rc=$?; echo "$(date +%T) campaign 6 cores rc $rc after $(( $(date +%s) - T0 )) s" >> $R/steps.txt; pack
fi
echo "$(date +%T) done" >> $R/steps.txt; pack; cat $R/steps.txt
