#!/bin/bash
# Device session W (written after V was scored, committed before W ran, ran 2026-12-01: w/README.md): U and V's settings again on a fresh machine,
# scored against grids of a new profile, w/profile-u1loop.json.gz (w/make_profile.sh: the embedded default with
# xgrammar's engine step refitted from u1's probe, the engine's busy loop outside the step function included).
# Post hoc on 82 points of 8 other xgrammar servers it scored 5.8% by the median rule (the default 7.0%).
#   w1 xgrammar, w2 guidance, w3 xgrammar; max-num-seqs 256, async, cores 0-13, cpu_count 16; each opened
#   at 96 (3 rounds, not scored), then eight points (4 rounds of at least 32 requests), in new orders.
# The bench: bench-idle before anything starts; bench-start on cores 14-15 while w1 starts (as U and V).
# Pre-registered (w/report.sh; grids w/predicted-*.json from w/predict_w.sh):
#   primary: the median |ITL error| over every scored point of W by the median-itl rule (as U and V), the
#     model run with w/profile-u1loop.json.gz; and the pooled score over every pre-registered point of P-W
#     by each session's registered rule (w/pooled.py).
#   comparator: the same points against U's grids (the embedded default), the same rule.
#   directions: guidance against xgrammar at each concurrency, U's rule, the W grids at bench-idle's speed.
#   tertiary: each point at bench-idle's speed and at bench-start's.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_w.sh run    (benches; w1; ~6 min)
#   bash validation/h200-vllm-0.25.1/session_w.sh more   (w2; ~3 min)
#   bash validation/h200-vllm-0.25.1/session_w.sh last   (w3; ~4 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/w; SESSION=W; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server, bench; maskcost's wheels on PYTHONPATH
points_as_r   # CL, CP, PTS, OPEN as in R-V
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while w1 starts on 0-13 (as O-V)
    server w1 256 0-13 "160 32 256 8 128 224 64 192" 280 "xgrammar mns256 async, server 1 on cores 0-13" || exit 1
    wait ;;
  more)
    BACKEND=guidance server w2 256 0-13 "192 8 160 64 256 128 32 224" 280 "guidance mns256 async, server 2 on cores 0-13" ;;
  last)
    server w3 256 0-13 "64 256 8 224 128 32 192 160" 280 "xgrammar mns256 async, server 3 on cores 0-13" ;;
esac
pack
