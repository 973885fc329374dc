#!/bin/bash
# Exploratory (not registered), after shape run 8 on its machine (an H100 host, 16 cores): the xgrammar server's flat
# c128 point twice, the server restarted (the same flags) and the point twice, restarted with OMP_NUM_THREADS=1
# and the point once. From the repository root: bash validation/h200-vllm-0.25.1/replicas/restart/run.sh
set -u; T0=$(date +%s); ROOT=$PWD; export R=/tmp/restart D=$ROOT/validation/h200-vllm-0.25.1/shape; mkdir -p $R
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
pk() { tar -C /tmp -czf "$OUT/restart.tar.gz" restart; }
pt() { timeout 100 python3 -m maskcost.cli sweep --base-url http://127.0.0.1:8000 --out $R/$1.jsonl --arms on \
  --concurrency 128 --repeats 1 --schema $D/schemas/flat.json --rounds 4 --client-procs 2 --label $1 >> $R/sweep.log 2>&1
  local rc=$?; echo "$(date +%T) $1 rc=$rc at $(( $(date +%s) - T0 )) s" >> $R/steps.txt; pk; }
stop() { kill -- -$(cat $1) 2>/dev/null; for i in $(seq 60); do curl -sf http://127.0.0.1:8000/health >/dev/null || break; sleep 1; done; sleep 8; }
kill -- -$(cat /tmp/shape/gd.pid) 2>/dev/null
for p in $(pgrep -s "$(cat /tmp/shape/xg.pid)"); do taskset -a -p -c 0-15 $p; done > /dev/null 2>&1
pt same-1; pt same-2
stop /tmp/shape/xg.pid; serve xgr 8000 0-15; up xgr 8000 >> $R/steps.txt || { pk; exit 1; }
pt restart-1; pt restart-2
[ $(( $(date +%s) - T0 )) -gt 300 ] && { echo "no time for omp1" >> $R/steps.txt; pk; cat $R/steps.txt; exit 0; }
stop $R/xgr.pid; OMP_NUM_THREADS=1 serve xg1 8000 0-15; up xg1 8000 >> $R/steps.txt || { pk; exit 1; }
pt omp1-1; cat $R/steps.txt
