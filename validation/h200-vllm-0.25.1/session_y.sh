#!/bin/bash
# Device session Y (written after W and X were scored, committed before Y ran): W's settings on a fresh
# machine with a second guidance server, scored against grids of a new profile, y/profile-u2fe.json.gz
# (y/make_profile.sh: W's primary with the API server's cost per request refitted on U's guidance server u2,
# 2.00 -> 4.25 ms: where the loop saturates, guidance at 160-256, it sets the running batch).
# Post hoc on U-W's 72 points by the median rule: 7.6% (u1loop 8.9%); v2 and w2 13.0% / 10.2% (14.2 / 10.5).
#   y1 xgrammar, y2 guidance, y3 xgrammar, y4 guidance; max-num-seqs 256, async, cores 0-13, cpu_count 16;
#   each opened at 96 (3 rounds, not scored), then eight points (4 rounds of at least 32 requests), new orders.
# The bench: bench-idle before anything starts; bench-start on cores 14-15 while y1 starts (as U-W).
# Pre-registered (y/report.sh; grids y/predicted-*.json from y/predict_y.sh):
#   primary: the median |ITL error| over every scored point of Y (y1-y4) by the median-itl rule (as U-W), the
#     model run with y/profile-u2fe.json.gz; and the pooled score over every pre-registered point of P-Y
#     by each session's registered rule (y/pooled.py).
#   comparator: the same points against W's grids (u1loop), the same rule.
#   directions: guidance against xgrammar at each concurrency, U's rule (y2 against y1 and y3's mean, right
#     where the measured change has the predicted sign and is larger than y1 and y3's gap), the Y grids at
#     bench-idle's speed; y4 against y1 and y3 the same way, counted with them.
#   tertiary: each point at bench-idle's speed and at bench-start's.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_y.sh run    (benches; y1; ~6 min)
#   bash validation/h200-vllm-0.25.1/session_y.sh more   (y2; ~3 min)
#   bash validation/h200-vllm-0.25.1/session_y.sh last   (y3; ~4 min)
#   bash validation/h200-vllm-0.25.1/session_y.sh four   (y4; ~3 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/y; SESSION=Y; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server, bench; maskcost's wheels on PYTHONPATH
points_as_r   # CL, CP, PTS, OPEN as in R-W
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while y1 starts on 0-13 (as O-W)
    server y1 256 0-13 "128 256 8 160 192 224 32 64" 280 "xgrammar mns256 async, server 1 on cores 0-13" || exit 1
    wait ;;
  more)
    BACKEND=guidance server y2 256 0-13 "160 128 192 8 64 224 256 32" 280 "guidance mns256 async, server 2 on cores 0-13" ;;
  last)
    server y3 256 0-13 "8 192 128 224 160 256 64 32" 280 "xgrammar mns256 async, server 3 on cores 0-13" ;;
  four)
    BACKEND=guidance server y4 256 0-13 "256 32 64 8 192 160 128 224" 280 "guidance mns256 async, server 4 on cores 0-13" ;;
esac
pack
