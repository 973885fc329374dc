#!/bin/bash
# The SGLang 0.5.17 live campaign on one fresh H200 device machine (issue 21). Registered in README.md
# here before it ran. From the repository root, carrying .device-stage-sg (stage_sglang.sh):
#   bash validation/h200-sglang-0.5.17/run.sh A   serve xgrammar; campaign-xgrammar: calibrate, check, predict
#                                                 (and the llguidance arm's predictions from the same profile)
#   bash validation/h200-sglang-0.5.17/run.sh B   campaign-xgrammar: validate, score; serve llguidance;
#                                                 campaign-llguidance (the xgrammar arm's profile): validate, score
#   bash validation/h200-sglang-0.5.17/run.sh C   the extras: --disable-overlap-schedule, unique schemas
# Results under $OUT/sg/ (and /tmp/sg-keep, so a later call on the same machine packs them all).
set -u
PH=$1; ROOT=$PWD; D=$ROOT/validation/h200-sglang-0.5.17; R=$OUT/sg; KEEP=/tmp/sg-keep; mkdir -p "$R"
[ -d "$KEEP" ] && cp -r "$KEEP"/. "$R"/
export STAGE=$ROOT/.device-stage-sg
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
pack() { mkdir -p "$KEEP" && cp -r "$R"/. "$KEEP"/; gzip -c /tmp/sglang.log > "$R/sglang-$PH-$1.log.gz" 2>/dev/null
         tar -C "$OUT" -czf "$OUT/sg-$PH.tar.gz" sg; }
run() { local t=$1 log=$2; shift 2; note "$log: $*"; (cd "$R" && timeout "$t" "$@" > "$R/$log.log" 2>&1); local rc=$?
        note "rc $rc"; pack "$log"; return $rc; }
serve() { run 330 "serve-$1" bash "$D/serve_sglang.sh" "$@" --attention-backend triton --sampling-backend pytorch; }
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc "$STAGE"/w/*.whl > "$R/pip.log" 2>&1
export PYTHONPATH=/tmp/sgsite:/tmp/mc   # SGLang's packages (xgrammar 0.2.1, llguidance 1.9.1), maskcost's wheel
MC="python3 -m maskcost.cli"
U=http://127.0.0.1:8000
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
esac
pack end
