#!/bin/bash
# Device session T (the 7 device minutes S left, same day, a fresh machine; written after S ran and was
# scored, before T ran): a second guidance server, the held-out backend direction on a second session
# (last measured in P, one server), and more pre-registered points for the pooled score.
# One server: guidance, max-num-seqs 256, async, cores 0-13, cpu_count 16; opening at 96 (3 rounds, not
# scored), then 128, 64, 256 (4 rounds of at least 32 requests); the bench on cores 14-15 while it starts.
# Pre-registered (t/report.sh, t/pooled.py; the grid t/predicted-guidance.json made by t/predict_t.sh
# with the model on main, identical at every point to P's p/predicted-guidance.json):
#   primary, the direction at 64, 128, 256: guidance against xgrammar, the grids at T's bench speed
#     (t/predicted-guidance.json, r/predicted-xgrammar.json), measured against S's 14-core xgrammar
#     servers (the mean over s1-14, s3-14, s5-14; s5-14 alone at 256); right where the measured change
#     has the predicted sign and is larger in size than the spread (S's same-config pairs at 64 and
#     128 as s/report.sh computes it; 7.0% at 256, r/server-spread.md). S's servers ran on another
#     machine of the same kind: the bench speeds of both are printed beside.
#   secondary: each scored point at the median of the ITL speeds of the server's earlier points
#     (tracking_report.py --rule median-itl); tertiary: the bench's speed.
#   pooled: t/pooled.py, every pre-registered scored point of P, R, S and T by the rule each session
#     registered (P: median of earlier fill speeds; R, S, T: median of earlier ITL speeds), and at the bench.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_t.sh run   (~4.5 min)
set -u
DEADLINE_S=${DEADLINE_S:-350}
PH=$1; R=$OUT/t; SESSION=T; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server; maskcost's wheels on PYTHONPATH, $T
CL="taskset -c 14,15"; CP="--client-procs 2"
PTS="--rounds 4 --min-requests 32"
OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while the server starts on 0-13 (as O, P, R, S)
    BACKEND=guidance server g14 256 0-13 "128 64 256" 100 "guidance mns256 async, cores 0-13"
    wait ;;
esac
pack
