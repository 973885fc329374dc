#!/bin/bash
# Device session M: the held-out configurations of the issue that were last measured in session I
# (guidance, unique schemas, the server on 4 cores), again, with the model as it stands, beside the
# max-num-seqs 256 xgrammar points; and the client's share of the TTFT: the client now runs as two
# processes on cores 14 and 15 (K and L: one process on 15, 64-74% busy at 256, and its TTFT p50
# 50-120 ms over the engine's own).
# Every prediction was made before the session and committed with this script (m/predict_m.sh:
# the embedded default, ij with the band, on a grid of CPU speeds). Nothing is fitted here.
# Pre-registered (m/report.sh): each set's points at the speed of the bench on the idle machine before
# the first server (bench-start), median |ITL error| per set and over all; the points inside the band;
# directions: guidance against xgrammar at 64, 160 and 256 and 14 cores against 4 (the model's
# direction right or not); unique schemas against shared at 8: the model predicts the same ITL (within
# 2%: right if the measured two are within 10%) and a longer TTFT (the compile).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_m.sh run     (bench, xgrammar server, its points, unique schemas)
#   bash validation/h200-vllm-0.25.1/session_m.sh more    (guidance server, its points; 4-core server, its points)
#   bash validation/h200-vllm-0.25.1/session_m.sh again   (a fresh xgrammar server, its points again)
# Added after those three ran (the first machine's results seen, its predictions unchanged), for the
# rest of the device time: another machine, the xgrammar and guidance points on it (m/report.sh's
# "machine 2" sets; its own idle bench before the server):
#   bash validation/h200-vllm-0.25.1/session_m.sh fresh
# Added after M's data were in and the default changed (m/README.md, post hoc: the pool-task factor
# from M's pool/serial ratio), for the last 4.8 device minutes: the new default (ijm) pre-registered
# (m/predicted-ijm.json) on a third machine, 64, 160 and 256, 4 rounds (m/report.sh: "ijm-m3"):
#   DEADLINE_S=200 bash validation/h200-vllm-0.25.1/session_m.sh pool
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/m; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
CL="taskset -c 14,15"; CP="--client-procs 2"
serve() {  # serve LOGNAME [taskset -c CPUS]: restart the server, the probe recording into $R/probe
  local log=$1 backend=$2; shift 2
  step 220 "$log" env MASKCOST_PROBE_DIR="$R/probe" "$@" bash $SRV "$backend" 256 $WS
  grep -q "vLLM up" "$R/$log.log"
}
sweep() { local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label, session M" $CP "$@"; }
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start   # idle machine, before any server: the speed every prediction is read at
    serve serve-xgrammar xgrammar taskset -c 0-13 || exit 1
    sweep m1-xgrammar 220 "xgrammar mns256 async, server on 0-13" --arms on $T --concurrency 8 32 64 128 160 256 $LONG
    sweep m2-unique 110 "xgrammar mns256 async, server on 0-13" --arms on $T --concurrency 1 8 --rounds 8 \
      --min-requests 32 --unique-schemas
    bench bench-mid ;;
  more)
    serve serve-guidance guidance taskset -c 0-13 && \
      sweep m3-guidance 130 "guidance mns256 async, server on 0-13" --arms on $T --concurrency 64 160 256 $LONG
    serve serve-taskset4 xgrammar taskset -c 0-3 && \
      sweep m4-taskset4 150 "xgrammar mns256 async, server on cores 0-3" --arms on $T --concurrency 64 160 256 $LONG
    bench bench-end ;;
  again)
    serve serve-xgrammar-2 xgrammar taskset -c 0-13 && \
      sweep m5-xgrammar-2 220 "xgrammar mns256 async, server on 0-13, restarted" --arms on $T \
        --concurrency 8 32 64 128 160 256 $LONG ;;
  fresh)
    host_info host-2.txt
    unpack_with_probe
    bench bench-fresh
    serve serve-xgrammar-3 xgrammar taskset -c 0-13 || exit 1
    sweep m7-xgrammar-3 220 "xgrammar mns256 async, server on 0-13, machine 2" --arms on $T \
      --concurrency 8 32 64 128 160 256 $LONG
    serve serve-guidance-2 guidance taskset -c 0-13 && \
      sweep m8-guidance-2 130 "guidance mns256 async, server on 0-13, machine 2" --arms on $T --concurrency 64 160 256 $LONG
    bench bench-fresh-end ;;
  pool)
    unpack_with_probe
    bench bench-pool
    serve serve-xgrammar-4 xgrammar taskset -c 0-13 || exit 1
    sweep m9-ijm 120 "xgrammar mns256 async, server on 0-13, machine 3" --arms on $T --concurrency 64 160 256 \
      --rounds 4 --min-requests 32 ;;
esac
pack
