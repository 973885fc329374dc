#!/bin/bash
# Device session V (written after U ran, in U's session, for the device minutes U left): U again on a
# fresh machine, the concurrencies in new orders, and a bench read as each server starts. U scored 9.6%
# by the median rule over 24 points, the pooled P-U 10.0% over 88 (43 within 10%); its bench-idle read
# 0.856 while its servers' ITL speeds ran 0.83-1.06 (u1), 1.14-1.22 (u2), 1.03-1.12 (u3).
#   v1 xgrammar, v2 guidance, v3 xgrammar; max-num-seqs 256, async, cores 0-13, cpu_count 16; each opened
#   at 96 (3 rounds, not scored), then eight points (4 rounds of at least 32 requests).
# The bench: bench-idle before anything starts; bench-start on cores 14-15 while v1 starts (as U);
# bench-v2 and bench-v3 the same while v2 and v3 start (new in V; free, the server's start is waited on).
# Pre-registered (v/report.sh = u/report.sh with S=v; U's grids u/predicted-*.json, unchanged):
#   primary: the median |ITL error| over every scored point of V by the median-itl rule (as U), and the
#     pooled score over every pre-registered point of P-V by each session's registered rule (v/pooled.py).
#   directions: guidance against xgrammar at each concurrency, U's rule (v2 against the mean of v1 and v3,
#     right where the measured change has the predicted sign and is larger in size than v1 and v3's gap).
#   tertiary: each point at bench-idle's speed, at bench-start's, and at its own server's start bench.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_v.sh run    (benches; v1; ~6 min)
#   bash validation/h200-vllm-0.25.1/session_v.sh more   (v2; ~3 min)
#   bash validation/h200-vllm-0.25.1/session_v.sh last   (v3; ~4 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/v; SESSION=V; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server, bench; maskcost's wheels on PYTHONPATH
points_as_r   # CL, CP, PTS, OPEN as in R-U
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while v1 starts on 0-13 (as O-U)
    server v1 256 0-13 "128 8 224 32 192 64 256 160" 280 "xgrammar mns256 async, server 1 on cores 0-13" || exit 1
    wait ;;
  more)
    bench bench-v2 > /dev/null 2>&1 &
    BACKEND=guidance server v2 256 0-13 "256 64 128 8 224 32 160 192" 280 "guidance mns256 async, server 2 on cores 0-13"
    wait ;;
  last)
    bench bench-v3 > /dev/null 2>&1 &
    server v3 256 0-13 "32 160 256 8 192 64 224 128" 280 "xgrammar mns256 async, server 3 on cores 0-13"
    wait ;;
esac
pack
