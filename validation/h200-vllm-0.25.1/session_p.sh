#!/bin/bash
# Device session P (a session with its own 30 device minutes): the median rule pre-registered, over
# more points and three kinds of server. Post hoc over sessions I-N (n/tracking-rules.md) the median
# of the fill speeds of a server's earlier points predicted its next within 6.3% (83 points), against
# 13.0% at the idle bench's speed; it is what `predict --cpu-speed-from-report` does with `report
# --probe` on every point run so far (session O ran it on the device, 3 points: 5.9%).
# Pre-registered (p/report.sh, p/predict_p.sh's grids, all committed before the run):
#   primary: every scored point read from its grid at the median of the fill speeds the engine ran
#     at on all the server's points before it (../tracking_report.py --rule median); the median
#     |ITL error| over every scored point of every server that ran. The goal: under 10%.
#   secondary: the same points at the speed of the bench (cores 14-15, while the first server
#     starts on 0-13).
#   directions: at the bench's speed, guidance against xgrammar and 4 cores against 14 at each
#     concurrency both ran (which is faster, from the grids; measured: the mean engine ITL there).
# Each server opens with a point at 96 (3 rounds, not scored: it gives the first speed); the points
# run 4 rounds of at least 32 requests. The client: two processes on cores 14-15 (as in M-O).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_p.sh run     (bench, xgrammar on 0-13, opening, two passes; ~9.5 min)
#   bash validation/h200-vllm-0.25.1/session_p.sh more    (xgrammar on cores 0-3, then guidance on 0-13, each opened; ~8.5 min)
#   DEADLINE_S=... bash validation/h200-vllm-0.25.1/session_p.sh extra   (only with 5 device minutes left
#     after those: a fresh xgrammar server on 0-13 of the same machine, opened, then the points in order)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/p; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T
CL="taskset -c 14,15"; CP="--client-procs 2"
PTS="--rounds 4 --min-requests 32"
serve() {  # serve LOGNAME BACKEND [taskset -c CPUS]: restart the server, the probe recording into $R/probe
  local log=$1 backend=$2; shift 2
  step 220 "$log" env MASKCOST_PROBE_DIR="$R/probe" "$@" bash $SRV "$backend" 256 $WS
  grep -q "vLLM up" "$R/$log.log"
}
sweep() { local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label, session P" $CP "$@"; }
OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while the server starts on 0-13 (as O)
    serve serve-xgrammar xgrammar taskset -c 0-13 || exit 1
    wait
    sweep p1-open 40 "xgrammar mns256 async, server on 0-13, opening" $OPEN
    sweep p2-pass1 200 "xgrammar mns256 async, server on 0-13" --arms on $T --concurrency 32 128 256 64 192 160 224 $PTS
    sweep p3-pass2 200 "xgrammar mns256 async, server on 0-13, pass 2" --arms on $T \
      --concurrency 224 64 160 32 256 128 192 $PTS ;;
  more)
    serve serve-taskset4 xgrammar taskset -c 0-3 && {
      sweep p4-taskset4-open 40 "xgrammar mns256 async, server on cores 0-3, opening" $OPEN
      sweep p5-taskset4 170 "xgrammar mns256 async, server on cores 0-3" --arms on $T --concurrency 64 160 256 128 192 $PTS; }
    serve serve-guidance guidance taskset -c 0-13 && {
      sweep p6-guidance-open 30 "guidance mns256 async, server on 0-13, opening" $OPEN
      sweep p7-guidance 130 "guidance mns256 async, server on 0-13" --arms on $T --concurrency 64 160 256 128 192 $PTS; } ;;
  extra)
    host_info host-extra.txt
    unpack_with_probe
    serve serve-xgrammar-extra xgrammar taskset -c 0-13 || exit 1
    sweep p8-extra-open 40 "xgrammar mns256 async, server on 0-13, extra, opening" $OPEN
    sweep p9-extra 300 "xgrammar mns256 async, server on 0-13, extra" --arms on $T --concurrency 64 160 256 128 32 192 224 $PTS ;;
esac
pack
