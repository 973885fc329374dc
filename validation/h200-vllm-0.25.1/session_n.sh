#!/bin/bash
# Device session N (for a session with its own 30 device minutes; not run when written): the tracking
# rule pre-registered. Sessions I-M (m/tracking.md, post hoc) say the model is right within a few
# percent at the speed the engine really fills at, and that this speed moves between points and
# servers far beyond what the idle bench says; predicting each point at the fill speed of the point
# before it backtested at 7.0% (63 points) against 13.6% at the bench speed.
# Pre-registered (n/report.sh, n/predict_n.sh's grids, all committed before the run):
#   primary: every scored point read from its grid at the speed the engine's fill ran at on the point
#     before it on the same server (../tracking_report.py), median |ITL error| over the three servers;
#   secondary: the same points at the speed of the bench on the idle machine before the first server.
# Each server opens with a point at concurrency 96 (not scored: it gives the first speed). xgrammar
# runs two passes, the second in reverse order, so the rule meets the load rising and falling and the
# serial/pool boundary both ways. The client: two processes on cores 14-15 (as in M).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_n.sh run    (bench, xgrammar server, opening, two passes; ~9 min)
#   bash validation/h200-vllm-0.25.1/session_n.sh more   (guidance, then the 4-core server, each opened; ~6 min)
#   DEADLINE_S=540 bash validation/h200-vllm-0.25.1/session_n.sh resume   (added after the two above ran)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/n; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
CL="taskset -c 14,15"; CP="--client-procs 2"
serve() {  # serve LOGNAME BACKEND [taskset -c CPUS]: restart the server, the probe recording into $R/probe
  local log=$1 backend=$2; shift 2
  step 220 "$log" env MASKCOST_PROBE_DIR="$R/probe" "$@" bash $SRV "$backend" 256 $WS
  grep -q "vLLM up" "$R/$log.log"
}
sweep() { local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label, session N" $CP "$@"; }
OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start   # idle machine, before any server: the secondary arm's speed
    serve serve-xgrammar xgrammar taskset -c 0-13 || exit 1
    sweep n1-open 40 "xgrammar mns256 async, server on 0-13, opening" $OPEN
    sweep n2-pass1 200 "xgrammar mns256 async, server on 0-13" --arms on $T --concurrency 8 32 64 128 192 160 256 $LONG
    sweep n3-pass2 200 "xgrammar mns256 async, server on 0-13, reverse" --arms on $T \
      --concurrency 256 160 192 128 64 32 8 $LONG ;;
  more)
    serve serve-guidance guidance taskset -c 0-13 && {
      sweep n4-guidance-open 30 "guidance mns256 async, server on 0-13, opening" $OPEN
      sweep n5-guidance 90 "guidance mns256 async, server on 0-13" --arms on $T --concurrency 64 160 256 $LONG; }
    serve serve-taskset4 xgrammar taskset -c 0-3 && {
      sweep n6-taskset4-open 40 "xgrammar mns256 async, server on cores 0-3, opening" $OPEN
      sweep n7-taskset4 150 "xgrammar mns256 async, server on cores 0-3" --arms on $T --concurrency 64 160 256 $LONG; }
    bench bench-end ;;
  resume)  # added after run and more ran, their data unseen but for the counts: pass1 lacked 256 and
    # pass2 64 32 8 (each 200 s step ran out). For the last device minutes (it ran on the same machine,
    # still held): a bench, a fresh xgrammar server opened at 96, then the missing points in pass order.
    host_info host-resume.txt
    unpack_with_probe
    bench bench-resume
    serve serve-xgrammar-resume xgrammar taskset -c 0-13 || exit 1
    sweep n8-resume-open 40 "xgrammar mns256 async, server on 0-13, resume, opening" $OPEN
    sweep n9-resume 240 "xgrammar mns256 async, server on 0-13, resume (pass1 256, pass2 64 32 8)" \
      --arms on $T --concurrency 256 64 32 8 $LONG ;;
esac
pack
