#!/bin/bash
# Device session K: every point predicted at the CPU speed measured beside it. Sessions I and J
# showed the engine thread's speed moving 15-40% between points minutes apart while an idle-machine
# bench moved 2%; here `maskcost hostmeter` runs on a core of its own (14) for the whole session,
# timing calibrate.host's bench (the profile's speed figure) and a 64-row serial fill every second,
# with /proc/stat's busy and steal per CPU and the server's threads (CPU share, the CPU each ran on).
# The server runs on cores 0-13 (cpu_count still 16; the fill pool has 8 threads either way), the
# client on 15, the probe inside the server (validate/probe.py, now with the engine core's socket
# threads and every garbage collection).
#
# Pre-registered, in this order of rank:
#   1. primary: profile-k (this server's calibration sweep at 8, 96 and 192, its engine fill fitted
#      at the meter's speed during each calibration point), each held-out point at the meter's
#      speed during it: `predicted-k-grid.json`, written on the device before the held-out sweeps
#      at the speeds GRID; the report interpolates in 1 / speed between the two around the meter's;
#   2. the embedded default (profile-ij-default, not refitted) the same way: `k/predicted-default-grid.json`,
#      committed before the session;
#   3. both at the idle bench's one speed taken before the server started (the protocol of I and J).
# Held out: xgrammar max-num-seqs 256 at 32, 64, 128, 160, 256, twice (the second pass in the
# next call), then max-num-seqs 128 at 160 and 256 (the knee: 128 rows fill serially, no pool);
# if device time is left, ngram with 3 draft tokens at 64 and 256 (draft rate 0, as session D found).
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/session_k.sh run    (bench, meter, serve, calibrate, fit, predict, pass 1)
#   bash validation/h200-vllm-0.25.1/session_k.sh more   (pass 2, bench, max-num-seqs 128)
#   bash validation/h200-vllm-0.25.1/session_k.sh ngram  (if time is left)
set -u
DEADLINE_S=${DEADLINE_S:-570}
PH=$1; R=$OUT/k; mkdir -p "$R/probe"
source validation/h200-vllm-0.25.1/lib.sh   # helpers, maskcost's wheels on PYTHONPATH, $T, $LONG
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --cores 14"
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(19)))")   # 0.40 ... 1.30
HELD="32 64 128 160 256"
sweep() { local name=$1 plan=$2; shift 2
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "xgrammar async, server on 0-13, session K" "$@"; }
serve() {  # serve NAME MNS [flags...]: (re)start the server on cores 0-13 with the probe
  local name=$1 mns=$2; shift 2
  step 200 "serve-$name" env MASKCOST_PROBE_DIR="$R/probe" taskset -c 0-13 bash $SRV xgrammar "$mns" $WS "$@"
  grep -q "vLLM up" "$R/serve-$name.log"
}
NGRAM="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"   # session D: ngram drafted nothing here
case $PH in
  run)
    host_info host.txt
    { lscpu; grep . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list; } > "$R/lscpu.txt" 2>&1
    unpack_with_probe
    bench bench-start
    echo "$SPEED" > "$R/speed.txt"
    note "hostmeter on core 14"
    setsid nohup taskset -c 14 $MC hostmeter --out "$R/meter.jsonl" --tokenizer /tmp/llama3-8b --interval-s 1 \
      > "$R/meter.log" 2>&1 < /dev/null &
    serve 256 256 || exit 1
    sweep k1-calib 90 --arms on $T --concurrency 8 96 192 $LONG
    step 40 fit $MC report --sweep "$R/k1-calib.jsonl" --probe "$R/probe" --hostmeter "$R/meter.jsonl" \
      --speed-from-meter --cores 14 --fit-engine-fill "$R/profile-k.json.gz" --out "$R/report-calib" \
      --title "Session K calibration (fitted at the meter's speed)"
    step 60 predict-grid $MC predict --profile "$R/profile-k.json.gz" $S --cpu-speed $GRID --max-num-seqs 256 128 \
      --concurrency $HELD --json "$R/predicted-k-grid.json"
    step 40 predict-ngram-grid $MC predict --profile "$R/profile-k.json.gz" $S $NGRAM --cpu-speed $GRID \
      --concurrency 64 256 --json "$R/predicted-k-ngram-grid.json"
    step 40 predict-bench $MC predict --profile "$R/profile-k.json.gz" $S --cpu-speed "$SPEED" --max-num-seqs 256 128 \
      --concurrency $HELD --json "$R/predicted-k-bench.json"
    step 40 predict-default-bench $MC predict $S --cpu-speed "$SPEED" --max-num-seqs 256 128 \
      --concurrency $HELD --json "$R/predicted-default-bench.json"
    note "held out from here"
    sweep k2-held 240 --arms on $T --concurrency $HELD $LONG ;;
  more)
    sweep k2-held 240 --arms on $T --concurrency $HELD $LONG --repeats 2   # resumes: the second pass only
    bench bench-end
    serve 128 128 && sweep k3-mns128 200 --arms on $T --concurrency 160 256 --rounds 3 --min-requests 32 ;;
  ngram)   # if device time is left: ngram, 3 draft tokens (vLLM turns async scheduling off)
    serve ngram 256 --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}' && \
      sweep k4-ngram 150 --arms on $T --concurrency 64 256 $LONG ;;
esac
pack
