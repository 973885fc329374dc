#!/bin/bash
# The SGLang 0.5.17 live campaign on one fresh H200 device machine (issue 21). Registered in README.md
# here before it ran. From the repository root, carrying .device-stage-sg (stage_sglang.sh):
#   bash validation/h200-sglang-0.5.17/run.sh A   serve xgrammar; campaign-xgrammar: calibrate, check, predict
#                                                 (and the llguidance arm's predictions from the same profile)
#   bash validation/h200-sglang-0.5.17/run.sh B   campaign-xgrammar: validate, score; serve llguidance;
#                                                 campaign-llguidance (the xgrammar arm's profile): validate, score
#   bash validation/h200-sglang-0.5.17/run.sh C   the extras: --disable-overlap-schedule, unique schemas
#   bash validation/h200-sglang-0.5.17/run.sh D   one machine, one call (run2/): this host's grammar traces, then
#                                                 xgrammar (:8000) and llguidance (:8100) served side by side on
#                                                 the GPU, the same loads on both, schema on and off, unique schemas
#   bash validation/h200-sglang-0.5.17/run.sh E   one machine, one call (run3/): this host's grammar traces, then
#                                                 llguidance (:8000, overlap) and xgrammar (:8100,
#                                                 --disable-overlap-schedule) side by side; schema off on both
#                                                 (forward and sync curves), the one-token prefill pair, then
#                                                 predictions, then schema on
#   bash validation/h200-sglang-0.5.17/run.sh F   exploratory (run3x/): llguidance with the overlap scheduler (:8000)
#                                                 and without (:8100), schema on with repeated and fresh prompts,
#                                                 schema off, at 32 and 128
#   bash validation/h200-sglang-0.5.17/run.sh G   one machine, one call (run4/): run.sh E's calibration, plus
#                                                 llguidance's engine work per row fitted on schema-on points at
#                                                 32 and 128, then predictions, then the held-out points
# Results under $OUT/sg/ (and /tmp/sg-keep, so a later call on the same machine packs them all).
set -u
PH=$1; ROOT=$PWD; D=$ROOT/validation/h200-sglang-0.5.17; R=$OUT/sg; KEEP=/tmp/sg-keep; mkdir -p "$R"
[ -d "$KEEP" ] && cp -r "$KEEP"/. "$R"/
export STAGE=$ROOT/.device-stage-sg
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
pack() { mkdir -p "$KEEP" && cp -r "$R"/. "$KEEP"/; for l in /tmp/sglang-*.log; do [ -f "$l" ] && gzip -c "$l" > "$R/$(basename "$l" .log)-$PH-$1.log.gz"; done
         tar -C "$OUT" -czf "$OUT/sg-$PH.tar.gz" sg; }
run() { local t=$1 log=$2; shift 2; note "$log: $*"; (cd "$R" && timeout "$t" "$@" > "$R/$log.log" 2>&1); local rc=$?
        note "rc $rc"; pack "$log"; return $rc; }
serve() { run 330 "serve-$1" bash "$D/serve_sglang.sh" "$@" --attention-backend triton --sampling-backend pytorch; }
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc "$STAGE"/w/*.whl > "$R/pip.log" 2>&1
export PYTHONPATH=/tmp/sgsite:/tmp/mc   # SGLang's packages (xgrammar 0.2.1, llguidance 1.9.1), maskcost's wheel
MC="python3 -m maskcost.cli"
U=http://127.0.0.1:8000
# runs 3, 3x and 4 (E, F, G): llguidance on :8000 with the overlap scheduler and BACKEND2 on :8100 without it,
# the second started once the first has its KV pool; logs serve-NAME1.log and serve-NAME2.log
two_servers() {
    local F="--attention-backend triton --sampling-backend pytorch --sleep-on-idle"
    note "serve llguidance :8000 (overlap)"
    (PORT=8000 MEM=0.45 bash "$D/serve_sglang.sh" llguidance 256 $F > "$R/serve-$2.log" 2>&1) &
    for i in $(seq 1 60); do grep -q "Memory pool end" /tmp/sglang-8000.log 2>/dev/null && break; sleep 3; done
    note "serve $1 :8100 (--disable-overlap-schedule)"
    (PORT=8100 MEM=0.7 bash "$D/serve_sglang.sh" "$1" 256 $F --disable-overlap-schedule > "$R/serve-$3.log" 2>&1) &
    wait; note "$(cat "$R"/serve-*.log | grep -h "up after\|died\|not up" | tr '\n' ' ')"; pack serve
}
S=("$D"/schemas/*.json)
sw() { local t=$1 log=$2 u=$3; shift 3; run "$t" "$log" $MC sweep --base-url "$u" --client-procs 6 --schema "${S[@]}" "$@"; }
# runs 3 and 4 (E, G): this host's traces; llguidance (:8000, overlap) and xgrammar (:8100, no overlap)
# side by side; the calibration points, never scored: the forward curve (overlap), the one-token
# prefill pair, the sync curve (as run 3 ran it, E went on past a failed calib-host; both stop now)
calibration_e() {
    { nproc; lscpu | grep -E "Model name|^CPU\(s\)|MHz"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
      ls "$STAGE"/w; } > "$R/host.txt" 2>&1
    run 120 assemble bash "$D/serve_sglang.sh" assemble 0 || exit 1
    run 150 calib-host $MC calibrate --engine-from "$D/run1/A/xgrammar/host.json.gz" --tokenizer /tmp/llama3-8b \
      --schema "$D"/schemas/*.json --out "$R/host.json.gz" || exit 1
    two_servers xgrammar llguidance xgrammar
    grep -h "KV Cache is allocated\|Memory pool end" /tmp/sglang-8*.log >> "$R/host.txt"
    L=http://127.0.0.1:8000; X=http://127.0.0.1:8100
    # calibration, never scored: the forward curve (overlap), the one-token prefill pair, the sync curve
    sw 90 off $L --arms off --concurrency 8 32 64 128 256 --off-tokens 256 --rounds 2 --label llguidance-off --out "$R/off.jsonl"
    sw 30 eager-same $L --arms off --concurrency 1 --off-tokens 16 --rounds 12 --label eager-same --out "$R/eager-same.jsonl"
    sw 30 eager-fresh $L --arms off --concurrency 1 --off-tokens 16 --rounds 12 --unique-prompts --label eager-fresh \
      --out "$R/eager-fresh.jsonl"
    sw 80 sync-off $X --arms off --concurrency 8 32 64 128 --off-tokens 256 --rounds 2 --label xgrammar-sync-off \
      --out "$R/sync.jsonl"
}
case $PH in
  A)
    { nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv;
      ls "$STAGE"/w; } > "$R/host.txt" 2>&1
    serve xgrammar 256 || exit 1
    python3 -c "import sglang, xgrammar, llguidance, sgl_kernel; print(sglang.__version__)" >> "$R/host.txt" 2>&1
    mkdir -p "$R/xgrammar" "$R/llguidance"
    # the campaign's calibrate + check + predict (its validate and score run in B)
    run 420 calib-xgrammar $MC campaign run "$D/campaign-xgrammar.json" --base-url $U --out "$R/xgrammar" --stop-after predict
    cp "$R/xgrammar/host.json.gz" "$R/llguidance/host.json.gz"
    run 60 predict-llguidance $MC campaign run "$D/campaign-llguidance.json" --base-url $U --out "$R/llguidance" --stop-after predict ;;
  B)
    # a fresh machine (the one of A went back): A's profiles and predictions, as they came back
    [ -d "$KEEP" ] || cp -r "$D/seed"/. "$R"/
    serve xgrammar 256 || exit 1
    run 300 val-xgrammar $MC campaign run "$D/campaign-xgrammar.json" --base-url $U --out "$R/xgrammar"
    serve llguidance 256 || exit 1
    run 240 val-llguidance $MC campaign run "$D/campaign-llguidance.json" --base-url $U --out "$R/llguidance" ;;
  C)
    serve xgrammar 256 || exit 1
    run 200 unique $MC validate --profile "$R/xgrammar/host.json.gz" --base-url $U --engine sglang \
      --engine-version 0.5.17 --backend xgrammar --unique-schemas --schema "$D"/schemas/*.json \
      --concurrency 8 128 --repeats 1 --out "$R/unique"
    serve xgrammar 256 --disable-overlap-schedule || exit 1
    run 200 no-overlap $MC validate --profile "$R/xgrammar/host.json.gz" --base-url $U --engine sglang \
      --engine-version 0.5.17 --backend xgrammar --no-async-scheduling --schema "$D"/schemas/*.json \
      --concurrency 32 128 --repeats 1 --out "$R/no-overlap" ;;
  D)
    { nproc; lscpu | grep -E "Model name|^CPU\(s\)|MHz"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
      ls "$STAGE"/w; } > "$R/host.txt" 2>&1
    run 120 assemble bash "$D/serve_sglang.sh" assemble 0 || exit 1
    # this host's grammar costs while nothing else runs (the forward curve: run 1's machine A, as committed)
    run 150 calib-host $MC calibrate --engine-from "$D/run1/A/xgrammar/host.json.gz" --tokenizer /tmp/llama3-8b \
      --schema "$D"/schemas/*.json --out "$R/host.json.gz"
    F="--attention-backend triton --sampling-backend pytorch --sleep-on-idle"
    # two servers on one GPU: SGLang sizes its KV pool from the memory free when it starts, so the second
    # starts once the first has allocated its pool (MEM: the fraction of what each finds free)
    note "serve xgrammar :8000"
    (PORT=8000 MEM=0.45 bash "$D/serve_sglang.sh" xgrammar 256 $F > "$R/serve-xgrammar.log" 2>&1) &
    for i in $(seq 1 60); do grep -q "Memory pool end" /tmp/sglang-8000.log 2>/dev/null && break; sleep 3; done
    note "serve llguidance :8100"
    (PORT=8100 MEM=0.7 bash "$D/serve_sglang.sh" llguidance 256 $F > "$R/serve-llguidance.log" 2>&1) &
    wait; note "$(cat "$R"/serve-*.log | grep -h "up after\|died\|not up" | tr '\n' ' ')"; pack serve
    grep -h "KV Cache is allocated\|Memory pool end" /tmp/sglang-8*.log >> "$R/host.txt"
    python3 -c "import sglang, xgrammar, llguidance; print(sglang.__version__, xgrammar.__version__, llguidance.__version__)" >> "$R/host.txt" 2>&1
    S=("$D"/schemas/*.json)
    sw() { local t=$1 log=$2 u=$3; shift 3; run "$t" "$log" $MC sweep --base-url "$u" --client-procs 2 --schema "${S[@]}" "$@"; }
    X=http://127.0.0.1:8000; L=http://127.0.0.1:8100
    # this machine's forward curve (schema off, 256 tokens a request, two client processes), then the
    # registered predictions of every schema-on point below, written before any of them runs
    sw 120 xgrammar-off $X --arms off --concurrency 8 32 64 128 192 256 --off-tokens 256 --rounds 2 --label xgrammar-off \
      --out "$R/xgrammar.off.jsonl"
    run 60 calib-forward $MC calibrate --engine-only --engine-from "$R/host.json.gz" --forward-sweep "$R/xgrammar.off.jsonl" \
      --out "$R/machine.json.gz"
    run 90 predict $MC predict --profile "$R/machine.json.gz" --engine sglang --engine-version 0.5.17 --backend xgrammar \
      guidance --max-num-seqs 256 --concurrency 8 32 64 128 256 --schema-id contact order review --no-band \
      --json "$R/predicted.json" --png "$R/predicted.png"
    sw 150 xgrammar-on $X --arms on --concurrency 8 32 64 128 --label xgrammar --out "$R/xgrammar.sweep.jsonl"
    sw 60 llguidance-on $L --arms on --concurrency 8 32 64 128 256 --label llguidance --out "$R/llguidance.sweep.jsonl"
    sw 40 llguidance-off $L --arms off --concurrency 8 64 256 --off-tokens 256 --rounds 2 --label llguidance-off \
      --out "$R/llguidance.off.jsonl"
    sw 60 llguidance-unique $L --arms on --unique-schemas --concurrency 8 128 --label llguidance-unique \
      --out "$R/llguidance.unique.jsonl"
    [ $SECONDS -lt 540 ] && sw $((585 - SECONDS)) xgrammar-unique $X --arms on --unique-schemas --concurrency 8 64 --label xgrammar-unique \
      --out "$R/xgrammar.unique.jsonl" ;;
  E)
    calibration_e
    run 60 calib-forward $MC calibrate --engine-only --engine-from "$R/host.json.gz" --forward-sweep "$R/off.jsonl" \
      --sync-sweep "$R/sync.jsonl" --eager-sweep "$R/eager-same.jsonl" "$R/eager-fresh.jsonl" --out "$R/machine.json.gz"
    # the registered predictions of every schema-on point below, written before any of them runs
    P="--profile $R/machine.json.gz --engine sglang --engine-version 0.5.17 --max-num-seqs 256 --schema-id contact order review
       --prompt-tokens 145 --prompt-cached-tokens 144 --no-band"
    run 60 predict-llguidance $MC predict $P --backend guidance --concurrency 8 32 64 128 256 \
      --json "$R/predicted-llguidance.json" --png "$R/predicted-llguidance.png"
    run 60 predict-xgrammar $MC predict $P --backend xgrammar --no-async-scheduling --concurrency 8 32 64 \
      --json "$R/predicted-xgrammar.json" --png "$R/predicted-xgrammar.png"
    sw 80 llguidance-on $L --arms on --concurrency 8 32 64 128 256 --label llguidance --out "$R/llguidance.sweep.jsonl"
    sw $(( SECONDS < 560 ? 590 - SECONDS : 30 )) xgrammar-on $X --arms on --concurrency 8 32 64 --label xgrammar-no-overlap \
      --out "$R/xgrammar.sweep.jsonl" ;;
  F)
    { nproc; lscpu | grep -E "Model name|^CPU\(s\)|MHz"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
      ls "$STAGE"/w; } > "$R/host.txt" 2>&1
    run 120 assemble bash "$D/serve_sglang.sh" assemble 0 || exit 1
    two_servers llguidance overlap no-overlap
    for u in 8000:overlap 8100:no-overlap; do
      p=${u%%:*}; n=${u#*:}; B=http://127.0.0.1:$p
      sw 60 "$n-on" $B --arms on --concurrency 32 128 --label "$n-on" --out "$R/$n.on.jsonl"
      sw 60 "$n-on-fresh" $B --arms on --concurrency 32 128 --unique-prompts --label "$n-on-fresh" --out "$R/$n.on-fresh.jsonl"
      sw 60 "$n-off" $B --arms off --concurrency 32 128 --off-tokens 256 --rounds 2 --label "$n-off" --out "$R/$n.off.jsonl"
      sw 40 "$n-off-short" $B --arms off --concurrency 32 128 --off-tokens 40 --rounds 3 --label "$n-off-short" \
        --out "$R/$n.off-short.jsonl"
    done ;;
  G)
    calibration_e
    sw 40 fit-on $L --arms on --concurrency 32 128 --label llguidance-fit --out "$R/fit.jsonl"
    run 120 calib-forward $MC calibrate --engine-only --engine-from "$R/host.json.gz" --forward-sweep "$R/off.jsonl" \
      --sync-sweep "$R/sync.jsonl" --eager-sweep "$R/eager-same.jsonl" "$R/eager-fresh.jsonl" --fit-rows "$R/fit.jsonl" \
      --server-engine sglang --server-engine-version 0.5.17 --server-backend guidance --server-cores 16 \
      --server-cpu-count 16 --max-num-seqs 256 --out "$R/machine.json.gz" || exit 1
    # the registered predictions of every held-out point below, written before any of them runs
    P="--profile $R/machine.json.gz --engine sglang --engine-version 0.5.17 --max-num-seqs 256 --schema-id contact order review
       --prompt-tokens 145 --prompt-cached-tokens 144 --requests 2000 --no-band"
    run 60 predict-llguidance $MC predict $P --backend guidance --concurrency 8 16 64 256 \
      --json "$R/predicted-llguidance.json" --png "$R/predicted-llguidance.png" || exit 1
    run 60 predict-xgrammar $MC predict $P --backend xgrammar --no-async-scheduling --concurrency 8 32 64 \
      --json "$R/predicted-xgrammar.json" --png "$R/predicted-xgrammar.png" || exit 1
    sw 60 llguidance-on $L --arms on --concurrency 8 16 64 256 --label llguidance --out "$R/llguidance.sweep.jsonl"
    sw $(( SECONDS < 500 ? 550 - SECONDS : 30 )) xgrammar-on $X --arms on --concurrency 8 32 64 --label xgrammar-no-overlap \
      --out "$R/xgrammar.sweep.jsonl" ;;
esac
pack end
