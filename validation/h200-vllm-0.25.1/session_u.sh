#!/bin/bash
# Device session U (for a session with its own 30 device minutes; written after T, not run when
# written): servers with many points each, the case the median rule is for. R and S gave each server
# one or two scored points, so the rule rested on the opening's speed (R 14.6%, S 13.2%); P, with 5-13
# points per server, scored 5.9%. Here three servers of one machine, each opened at 96 (3 rounds, not
# scored) and then eight points (4 rounds of at least 32 requests), in a different order on each:
#   u1 xgrammar, u2 guidance, u3 xgrammar; max-num-seqs 256, async, cores 0-13, cpu_count 16.
# And the bench, twice: on an idle machine before anything starts (bench-idle), and as in O-T on
# cores 14-15 while u1 starts (bench-start): T's read 0.552 while its engine ran at 0.85-0.99.
# Pre-registered (u/report.sh; grids u/predicted-*.json from u/predict_u.sh, the embedded default ijm):
#   primary: the median |ITL error| over every scored point of U, each at the median of the ITL speeds
#     of the server's earlier points (tracking_report.py --rule median-itl); and the pooled score over
#     every pre-registered point of P-U by each session's registered rule (u/pooled.py).
#   directions: guidance against xgrammar at each concurrency (the grids at bench-idle's speed; measured:
#     u2 against the mean of u1 and u3), right where the measured change has the predicted sign and is
#     larger in size than u1 and u3's gap there.
#   tertiary: each point at bench-idle's speed and at bench-start's.
# The client: two processes on cores 14-15.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_u.sh run    (benches; u1; ~7.5 min)
#   bash validation/h200-vllm-0.25.1/session_u.sh more   (u2; ~6 min)
#   bash validation/h200-vllm-0.25.1/session_u.sh last   (u3; ~6 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/u; SESSION=U; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server; maskcost's wheels on PYTHONPATH, $T
points_as_r   # CL, CP, PTS, OPEN as in R-T
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while u1 starts on 0-13 (as O-T)
    server u1 256 0-13 "64 192 8 256 128 32 160 224" 280 "xgrammar mns256 async, server 1 on cores 0-13" || exit 1
    wait ;;
  more)
    BACKEND=guidance server u2 256 0-13 "160 32 224 64 8 192 128 256" 280 "guidance mns256 async, server 2 on cores 0-13" ;;
  last)
    server u3 256 0-13 "224 128 8 160 64 256 32 192" 280 "xgrammar mns256 async, server 3 on cores 0-13" ;;
esac
pack
