#!/bin/bash
# Device session X (written after W was scored, committed before X ran): a diagnostic, not a score. In U, V and W
# the guidance server at 192-256 ran 155-222 requests where the model has 184-246, its admissions took 80-148 ms
# and the client's mean e2e exceeded vLLM's own by 0.18-0.65 s (w/frontend.md). Is the measuring client the
# limit (two processes on cores 14-15), or the server's side? One guidance server, max-num-seqs 256, async, on
# cores 0-11 (cpu_count 16), opened at 96; then 256 and 192 (4 rounds of at least 32 requests) three times:
#   A: the client as in U-W, two processes on cores 14-15; B: four processes on cores 12-15; A again (drift).
# Registered reading (x/README.md): the client limits the loop where B's running at 256 exceeds the mean of the
# two A's by more than 10 requests and by more than twice the two A's gap; otherwise the limit is on the server's
# side. The same for the client-minus-vLLM e2e gap (B below both A's by more than their gap).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_x.sh run    (~5 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/x; SESSION=X; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, bench; maskcost's wheels on PYTHONPATH
PTS="--arms on $T --concurrency 256 192 --rounds 4 --min-requests 32"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    BACKEND=guidance serve serve-x1 256 0-11 || exit 1
    CL="taskset -c 14,15"; CP="--client-procs 2"
    sweep x1-open 40 "guidance mns256 async, server on cores 0-11, opening" --arms on $T --concurrency 96 --rounds 3 --min-requests 32
    sweep x1-a 90 "guidance, client A: 2 procs on cores 14-15" $PTS
    CL="taskset -c 12-15"; CP="--client-procs 4"
    sweep x1-b 90 "guidance, client B: 4 procs on cores 12-15" $PTS
    CL="taskset -c 14,15"; CP="--client-procs 2"
    sweep x1-a2 90 "guidance, client A again: 2 procs on cores 14-15" $PTS ;;
esac
pack
