#!/bin/bash
# Exploratory (issue 36; shape/README.md "The API server's cost by schema"): does a schema's request cost the llguidance
# server's API process more than its tokens say? One llguidance server as the shape check starts it (cores 0-15,
# GPU_UTIL 0.42), then each schema alone and the three mixed (calibrate's speed points' mix) at 224 and 96 clients
# (calibrate's loads), 4 client processes, then the 224-client ones again in reverse order (the drift). Each sweep
# keeps the server's threads' CPU (server_cpu: the loop thread, the renderer's worker, the EngineCore).
# From the repository root on the device machine, once the staged bundle's first part is at /tmp/stage-part00 (a first
# call; replicas/engines.sh unpacks the rest and starts the server):
#   bash validation/h200-vllm-0.25.1/shape/loops/run.sh     -> $OUT/loops.tar.gz after every sweep ($OUT: the device's
#   results folder, required); sweeps in $LOOPS (default /tmp/loops), each logged with its rc in steps.txt
set -u
ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/shape; R=${LOOPS:-/tmp/loops}; mkdir -p $R
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
pack() { [ -f $R/gd.log ] && gzip -c $R/gd.log > $R/gd.log.gz; tar -C "$(dirname $R)" --exclude=gd.log -czf "$OUT/loops.tar.gz" "$(basename $R)"; }
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/host.txt 2>&1
curl -sf http://127.0.0.1:8001/health >/dev/null || {
  serve gd 8001 0-15 --structured-outputs-config.backend guidance; up gd 8001 || { pack; exit 1; }; }
one() {  # NAME CONC SCHEMA...: schema on, 3 rounds, 4 client processes
  local name=$1 c=$2; shift 2
  timeout 120 python3 -m maskcost.cli sweep --base-url http://127.0.0.1:8001 --out "$R/$name.jsonl" --arms on \
    --concurrency "$c" --schema "$@" --rounds 3 --client-procs 4 --label "$name" >> "$R/sweep.log" 2>&1
  local rc=$?; echo "$(date +%T) $name rc=$rc" | tee -a "$R/steps.txt"; pack  # (the 2026-12-06 call logged date's: 0)
}
S=$D/schemas
for c in 224 96; do
  for s in flat nested deep; do one $s-c$c $c $S/$s.json; done
  one mix-c$c $c $S/flat.json $S/nested.json $S/deep.json
done
one mix-c224-2 224 $S/flat.json $S/nested.json $S/deep.json
for s in deep nested flat; do one $s-c224-2 224 $S/$s.json; done
