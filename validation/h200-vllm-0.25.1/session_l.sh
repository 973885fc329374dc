#!/bin/bash
# Device session L: does a server's in-engine fill settle after a burn-in, and does a calibration
# made after it predict later points? In session K (../k/README.md) the fill per row rose 15-25%
# between two passes over the same points minutes apart on one server, while the host meter (a
# separate process) stayed flat and a fresh server was fast again. Here the server first serves a
# burn-in (concurrency 256, 30 rounds, about 6,000 requests, not scored), then session K's protocol:
# calibration at 8, 96 and 192 (engine fill fitted at the meter's speed), predictions written on the
# device before the held-out points (32, 64, 128, 160, 256), two or three passes over them.
# The meter now writes outside $OUT (which the device empties before every call; session K lost the
# meter's second-call records that way) and every pack copies it in.
#
# Pre-registered, in this order of rank:
#   1. primary: profile-l (this server's calibration after the burn-in), each held-out point at the
#      meter's speed during it (predicted-l-grid.json, written on the device before the held-out sweep);
#   2. session K's in-session profile the same way (../k/predicted-k-grid.json, made before this session);
#   3. the embedded default the same way (../k/predicted-default-grid.json).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_l.sh run    (meter, serve, burn-in, calibrate, fit, predict, pass 1, bench)
#   DEADLINE_S=250 bash validation/h200-vllm-0.25.1/session_l.sh more   (pass 2, then pass 3 if time is left)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/l; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
METER=/tmp/l-meter.jsonl
eval "lib_$(declare -f pack)"
pack() { cp "$METER" "$R/meter.jsonl" 2>/dev/null; lib_pack; }
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --cores 14"
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(19)))")   # 0.40 ... 1.30
HELD="32 64 128 160 256"
sweep() { local name=$1 plan=$2; shift 2
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar async, server on 0-13, session L" "$@"; }
case $PH in
  run)
    host_info host.txt
    unpack_with_probe
    note "hostmeter on core 14"
    setsid nohup taskset -c 14 $MC hostmeter --out "$METER" --tokenizer /tmp/llama3-8b --interval-s 1 \
      > "$R/meter.log" 2>&1 < /dev/null &
    step 200 serve env MASKCOST_PROBE_DIR="$R/probe" taskset -c 0-13 bash $SRV xgrammar 256 $WS
    grep -q "vLLM up" "$R/serve.log" || exit 1
    sweep l0-burnin 150 --arms on $T --concurrency 256 --rounds 30 --min-requests 32
    sweep l1-calib 90 --arms on $T --concurrency 8 96 192 $LONG
    step 40 fit $MC report --sweep "$R/l1-calib.jsonl" --probe "$R/probe" --hostmeter "$METER" \
      --speed-from-meter --cores 14 --fit-engine-fill "$R/profile-l.json.gz" --out "$R/report-calib" \
      --title "Session L calibration after the burn-in (fitted at the meter's speed)"
    step 60 predict-grid $MC predict --profile "$R/profile-l.json.gz" $S --cpu-speed $GRID --max-num-seqs 256 \
      --concurrency $HELD --json "$R/predicted-l-grid.json"
    note "held out from here"
    sweep l2-held 200 --arms on $T --concurrency $HELD $LONG
    bench bench-end ;;
  more)
    sweep l2-held 200 --arms on $T --concurrency $HELD $LONG --repeats 2   # resumes: the second pass only
    sweep l2-held 120 --arms on $T --concurrency $HELD $LONG --repeats 3 ;;
esac
pack
