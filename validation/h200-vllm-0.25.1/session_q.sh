#!/bin/bash
# Device session Q (a diagnostic after P, the last ~6 device minutes of P's session; not a
# prediction): on 4 cores at 128 rows (serial fill) P's server ran 14% slower than its two 14-core
# servers (fill p50 161 ms against 132-138), where the model says no change. Is it the cores 0-3
# (CPU 0 takes the machine's interrupts on many VMs) or having four? A fresh machine: the server on
# cores 4-7, then on 0-3, each at 128 (4 rounds), with the probe; the engine's fill speed compared.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   DEADLINE_S=300 bash validation/h200-vllm-0.25.1/session_q.sh run
set -u
DEADLINE_S=${DEADLINE_S:-300}
PH=$1; R=$OUT/q; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh
CL="taskset -c 14,15"; CP="--client-procs 2"
serve() { local log=$1; shift
  step 150 "$log" env MASKCOST_PROBE_DIR="$R/probe" "$@" bash $SRV xgrammar 256 $WS
  grep -q "vLLM up" "$R/$log.log"; }
sweep() { local name=$1; shift
  step 45 "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar mns256 async, $*, session Q" $CP \
    --arms on $T --concurrency 128 --rounds 4 --min-requests 32; }
host_info host.txt
awk 'NR == 1 {n = NF} NR > 1 {for (i = 2; i <= n + 1; i++) s[i - 1] += $i} END {for (i = 1; i <= n; i++) printf "cpu%d %d\n", i - 1, s[i]}' \
  /proc/interrupts > "$R/interrupts-start.txt" 2>&1
unpack_with_probe
serve serve-cores4-7 taskset -c 4-7 && sweep q1-cores4-7 "server on cores 4-7"
serve serve-cores0-3 taskset -c 0-3 && sweep q2-cores0-3 "server on cores 0-3"
awk 'NR == 1 {n = NF} NR > 1 {for (i = 2; i <= n + 1; i++) s[i - 1] += $i} END {for (i = 1; i <= n; i++) printf "cpu%d %d\n", i - 1, s[i]}' \
  /proc/interrupts > "$R/interrupts-end.txt" 2>&1
pack
