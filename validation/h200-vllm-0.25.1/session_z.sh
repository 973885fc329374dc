#!/bin/bash
# Device session Z (written after Y was scored, committed before Z ran): one guidance server with Y's
# settings on a fresh machine (the ten device minutes the session had left), scored against grids of
# z/profile-u2fes.json.gz (z/make_profile.sh): Y's profile refitted with the model on main, where the API
# server's costs now scale with the CPU speed (5.38 ms a request at the profile host's speed).
# Post hoc on U-Y's 104 points by the median rule: 7.0% (u2fe, Y's, 7.0%; within 10% 65 against 63, from the
#   tables' whole-% errors); Y's 32: 4.0% (u2fe 6.0%), its guidance servers 5.6% and 3.6% (7.4%, 9.6%).
#   z1 guidance; max-num-seqs 256, async, cores 0-13, cpu_count 16; opened at 96 (3 rounds, not scored), then
#   eight points (4 rounds of at least 32 requests) in a new order. bench-idle before the server starts.
# Pre-registered (z/report.sh; grids z/predicted-*.json from z/predict_z.sh):
#   primary: the median |ITL error| over Z's 8 scored points by the median-itl rule (as U-Y), the model run with
#     z/profile-u2fes.json.gz; and the pooled score over every pre-registered point of P-Z (z/pooled.py).
#   tertiary: each point at bench-idle's speed. No directions: Z has no xgrammar server.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_z.sh run    (bench; z1; ~5 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/z; SESSION=Z; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server, bench; maskcost's wheels on PYTHONPATH
points_as_r   # CL, CP, PTS, OPEN as in R-Y
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-idle
    BACKEND=guidance server z1 256 0-13 "224 64 160 8 256 128 32 192" 280 "guidance mns256 async, server 1 on cores 0-13" ;;
esac
pack
