#!/bin/bash
# Device session S (for a session with its own 30 device minutes; written after R, not run when
# written): the two held-out directions R left wrong, with a test sized to the engine's own spread.
#  1. 4 cores at serial fills (64 and 128 rows): the model says no change (+0%). R measured -10% at 64
#     and +13% at 128 with one server of each config per pair, while two servers of one config on one
#     machine ran a serial-fill point 11.3% apart (median of 14 pairs, r/server-spread.md). Here six
#     servers of one machine, alternating 14, 4, 14, 4, 14, 4 cores, each at 64 and 128 (the order
#     swapped from server to server), so each config has three servers and three same-config pairs.
#  2. ngram speculative decoding (3 tokens; async off, no drafts with random weights) at 64 and 256,
#     predicted with the spec-decoding window fix (8ba4a75): at 64 +1.5% against no spec decoding.
# Pre-registered (s/report.sh; the grids are R's, made before R with the embedded default ijm, which
# is unchanged: r/predicted-xgrammar.json, r/predicted-taskset4.json, and r/posthoc/predicted-ngram3.json
# made with the fix before this was written):
#   primary, the directions (the grids at the bench's speed; measured: the engine's mean ITL over a
#     config's servers at that concurrency; spread: the median |difference| of the same-config pairs of
#     servers at that concurrency, in % of the smaller):
#     - a predicted change under 5% in size is "no change": right where the measured change is smaller in
#       size than the spread (restarting a server moves the point more than the change does);
#     - a larger predicted change: right where the measured change has its sign and is larger in size
#       than the spread.
#     4 cores against 14 at 64 and 128; ngram against the 14-core servers at 64 and 256 (server 5 runs
#     256 too; at 256, with one such server, the spread is the pool fills' median in r/server-spread.md, 7.0%).
#   secondary: every scored point read from its grid at the median of the ITL speeds of the server's
#     points before it (tracking_report.py --rule median-itl, the model as it stands); tertiary: the
#     bench's speed (cores 14-15, while server 1 starts).
# Each server opens with a point at 96 (3 rounds, not scored); points 4 rounds of at least 32 requests.
# The client: two processes on cores 14-15.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_s.sh run    (bench; 1: 14 cores; 2: 4 cores; ~6.5 min)
#   bash validation/h200-vllm-0.25.1/session_s.sh more   (3: 14; 4: 4; 5: 14, also at 256; ~8.5 min)
#   bash validation/h200-vllm-0.25.1/session_s.sh last   (6: 4; ngram 3; ~6 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/s; SESSION=S; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # step, serve, sweep, server; maskcost's wheels on PYTHONPATH, $T
CL="taskset -c 14,15"; CP="--client-procs 2"
PTS="--rounds 4 --min-requests 32"
OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
X="xgrammar mns256 async"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while server 1 starts on 0-13 (as O, P, R)
    server s1-14 256 0-13 "64 128" 80 "$X, server 1 on cores 0-13" || exit 1
    wait
    server s2-4 256 0-3 "128 64" 80 "$X, server 2 on cores 0-3" ;;
  more)
    server s3-14 256 0-13 "128 64" 80 "$X, server 3 on cores 0-13"
    server s4-4 256 0-3 "64 128" 80 "$X, server 4 on cores 0-3"
    server s5-14 256 0-13 "64 128 256" 110 "$X, server 5 on cores 0-13" ;;
  last)
    server s6-4 256 0-3 "128 64" 80 "$X, server 6 on cores 0-3"
    server ngram3 256 0-13 "64 256" 120 "$X ngram 3 (async off), cores 0-13" \
      --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}' ;;
esac
pack
