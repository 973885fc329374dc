#!/bin/bash
# Exploratory (issue 36; shape/README.md "The GIL's switch interval and the admission wait"): does the GIL's hand-off
# between the API server's event loop and its renderer thread set the wait before the engine sees a request at
# llguidance's 256-client points (docs/validation.md finding 51)? One llguidance server as the shape check starts it
# (cores 0-15, GPU_UTIL 0.42), restarted for each switch interval of its API process (gil/sitecustomize.py; the
# EngineCore keeps CPython's 5 ms): 5 ms (no override), 1 ms, 20 ms, 5 ms again; MS api2: 5 ms and two API server
# processes (--api-server-count 2). At each, flat then nested alone at 256 clients, 3 rounds, 4 client processes.
# Each sweep keeps the server's threads' CPU and the engine's TTFT.
# From the repository root on the device machine, once the staged bundle's first part is at /tmp/stage-part00:
#   bash validation/h200-vllm-0.25.1/shape/gil/run.sh MS...   -> $OUT/gil.tar.gz after every sweep; sweeps in $GIL
#   (default /tmp/gil), each logged in steps.txt with its rc
set -u
ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/shape; R=${GIL:-/tmp/gil}; mkdir -p $R
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
pack() { for f in $R/*.log; do [ -f "$f" ] && gzip -c "$f" > "$f.gz"; done
         tar -C "$(dirname $R)" --exclude='*.log' -czf "$OUT/gil.tar.gz" "$(basename $R)"; }
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/host.txt 2>&1
one() {  # NAME SCHEMA: schema on, 256 clients, 3 rounds, 4 client processes
  timeout 150 python3 -m maskcost.cli sweep --base-url http://127.0.0.1:8001 --out "$R/$1.jsonl" --arms on \
    --concurrency 256 --schema "$D/schemas/$2.json" --rounds 3 --client-procs 4 --label "$1" >> "$R/sweep.log" 2>&1
  local rc=$?; echo "$(date +%T) $1 rc=$rc" | tee -a "$R/steps.txt"; pack
}
for ms in "$@"; do
  pkill -f "entrypoints.cli.mai[n]"; sleep 5
  name=gd-ms$ms; [ -f "$R/$name.log" ] && name=$name-2
  if [ "$ms" = api2 ]; then serve $name 8001 0-15 --structured-outputs-config.backend guidance --api-server-count 2
  elif [ "$ms" = 5 ]; then serve $name 8001 0-15 --structured-outputs-config.backend guidance
  else (export MASKCOST_SWITCH_MS=$ms PYTHONPATH=$D/gil:${PYTHONPATH:-}
        serve $name 8001 0-15 --structured-outputs-config.backend guidance)
  fi
  up $name 8001 | tee -a "$R/steps.txt" || { pack; continue; }
  for s in flat nested; do one $s-${name#gd-} $s; done
done
pkill -f "entrypoints.cli.mai[n]"; pack
