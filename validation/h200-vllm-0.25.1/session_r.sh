#!/bin/bash
# Device session R (for a session with its own 30 device minutes; written after P, not run when
# written): the held-out changes P left unsettled, pre-registered with the median rule.
#  1. 4 cores at serial fills: the model says the core count does not matter at 64 and 128 rows; P
#     measured +16-18% against one 14-core server (8 of 10 directions), sessions M and N -12% and +38%
#     at 64, and Q a 4-core server faster at 128 than all of P's. Here four servers of one machine,
#     alternating: 14 cores (A), 4 cores (B), 14 (C), 4 (D).
#  2. max-num-seqs 128 at 160 and 256 (no pool: 128 rows fill serially) and ngram speculative
#     decoding with 3 tokens at 64 and 256 (vLLM turns async scheduling off; drafts 0 with random
#     weights, session D), each on its own server, last predicted pre-registered in sessions D and K.
# Pre-registered (r/report.sh, r/predict_r.sh's grids, committed before the run):
#   primary (made primary after P, before this ran; P's rule is the secondary): every scored point
#     read from its grid at the median of the ITL speeds of the server's points before it
#     (../tracking_report.py --rule median-itl: no probe, predict --cpu-speed-from-report's default);
#     the median |ITL error| over every scored point. The goal: under 10%.
#   secondary: the same at the median of the earlier points' fill speeds (--rule median, the probe's:
#     P's primary); tertiary: the bench's speed (cores 14-15, while A starts).
#   directions (the grids at the bench's speed; measured: the engine's mean ITL over servers):
#     4 cores at 64 and 128, predicted no change: right where the 4-core servers' mean is within 10%
#     of the 14-core servers' mean (also shown: against the spread between servers of one config);
#     max-num-seqs 128 against 256 at 160 and 256; ngram against no speculation at 64 and 256.
# Each server opens with a point at 96 (3 rounds, not scored: its first speed); points 4 rounds of at
# least 32 requests. The client: two processes on cores 14-15.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_r.sh run    (bench; A: 14 cores; B: 4 cores; ~8 min)
#   bash validation/h200-vllm-0.25.1/session_r.sh more   (C: 14 cores; D: 4 cores; ~7 min)
#   bash validation/h200-vllm-0.25.1/session_r.sh last   (max-num-seqs 128; ngram; ~6.5 min)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/r; SESSION=R; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers (serve, sweep, server: in this file when it ran, 1d008c8), maskcost's wheels on PYTHONPATH, $T
CL="taskset -c 14,15"; CP="--client-procs 2"
PTS="--rounds 4 --min-requests 32"
OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    bench bench-start > /dev/null 2>&1 &   # on 14-15 while the server starts on 0-13 (as O, P)
    server a14 256 0-13 "64 128 160 256" 150 "xgrammar mns256 async, server A on cores 0-13" || exit 1
    wait
    server b4 256 0-3 "64 128" 100 "xgrammar mns256 async, server B on cores 0-3" ;;
  more)
    server c14 256 0-13 "128 64 256 160" 150 "xgrammar mns256 async, server C on cores 0-13"
    server d4 256 0-3 "128 64" 100 "xgrammar mns256 async, server D on cores 0-3" ;;
  last)
    server mns128 128 0-13 "160 256" 90 "xgrammar mns128 async, cores 0-13"
    server ngram3 256 0-13 "64 256" 120 "xgrammar mns256 ngram 3 (async off), cores 0-13" \
      --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}' ;;
esac
pack
