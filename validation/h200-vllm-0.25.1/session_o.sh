#!/bin/bash
# Device session O (the last ~7 device minutes of the session that ran N): `predict
# --cpu-speed-from-report` pre-registered, run as a user would run it. Post hoc over sessions I-N
# (n/tracking-rules.md), the median of a server's earlier in-engine fill speeds predicted its next
# points within 6.3% (13.0% at the idle bench's speed); this is its first test written down first.
# One fresh machine; one xgrammar server on cores 0-13 with the probe; the client as two processes on
# 14-15. The bench runs on 14-15 while the server starts (on 0-13), to save device time.
# Openings at 96 and 192 (3 rounds; not scored); `report --probe` on them; `predict
# --cpu-speed-from-report` for 64, 160 and 256 on the device before those points run
# (predicted-o.json); then the three points, 4 rounds each.
# Pre-registered (o/report.sh): median |ITL error| over the three points of predicted-o.json
# (primary), against n/predicted-xgrammar.json (made before session N) read at this machine's bench
# speed (secondary).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   DEADLINE_S=360 bash validation/h200-vllm-0.25.1/session_o.sh run
set -u
DEADLINE_S=${DEADLINE_S:-360}
PH=$1; R=$OUT/o; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
CL="taskset -c 14,15"; CP="--client-procs 2"
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cores 14"
sweep() { local name=$1 plan=$2; shift 2
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar mns256 async, server on 0-13, session O" $CP "$@"; }
host_info host.txt
unpack_with_probe
bench bench-start > /dev/null 2>&1 &
step 200 serve env MASKCOST_PROBE_DIR="$R/probe" taskset -c 0-13 bash $SRV xgrammar 256 $WS
grep -q "vLLM up" "$R/serve.log" || exit 1
wait
sweep o1-open 70 --arms on $T --concurrency 96 192 --rounds 3 --min-requests 32
step 40 report-open $CL $MC report --sweep "$R/o1-open.jsonl" --probe "$R/probe" --max-num-seqs 256 --cores 14 \
  --out "$R/report-open" --title "Session O openings (not scored)"
step 40 predict $CL $MC predict $S --concurrency 64 160 256 --cpu-speed-from-report "$R/report-open/report.json" \
  --no-band --json "$R/predicted-o.json"
[ -s "$R/predicted-o.json" ] || exit 1
note "held out from here"
sweep o2-held 150 --arms on $T --concurrency 64 160 256 --rounds 4 --min-requests 32
pack
