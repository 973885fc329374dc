#!/bin/bash
# Device session H (the last 4 minutes of the session's device time): the post-hoc model
# (embedded default = e/profile-e-posthoc.json.gz: prefill fix + API-server queue) pre-registered
# on a fresh server, with the host's single-thread benchmark measured first and the predictions
# scaled by it (--cpu-speed = profile bench_us / this host's), written before any request.
#   bash validation/h200-vllm-0.25.1/session_h.sh
set -u
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl > /dev/null 2>&1   # the wheels less quicktok (64 MiB carry)
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000
R=$OUT/h; mkdir -p "$R"
pack() { gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/h.tar.gz" h; }
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
note bench   # on an idle machine, before the server starts: the median of three runs
python3 -c "
from maskcost.calibrate.tokenizer import load_vocab; from maskcost.calibrate.host import bench_us
from maskcost.calibrate.profile import load_default_profile
v = load_vocab('/tmp/llama3-8b'); b = sorted(bench_us(v) for _ in range(3))[1]; p = load_default_profile().host.bench_us
print(f'bench_us {b:.1f} profile {p:.1f} speed {p / b:.4f}')" > "$R/bench.txt" 2>&1
SPEED=$(awk '/speed/ {print $6}' "$R/bench.txt"); note "speed ${SPEED:-?}"
note serve; bash .device-stage/b/serve_vllm.sh xgrammar 256 --structured-outputs-config.disable_any_whitespace true > "$R/serve.log" 2>&1 &
SP=$!
$MC predict --schema-id tier/flat tier/bounded --concurrency 64 160 --prompt-tokens 122 --prompt-cached-tokens 112 \
  --cpu-speed ${SPEED:-1.0} --json "$R/predicted-h-on-short.json" > "$R/predict.log" 2>&1
$MC predict --schema-id tier/flat tier/bounded --concurrency 64 160 --prompt-tokens 122 --prompt-cached-tokens 112 \
  --json "$R/predicted-h-on-short-unscaled.json" > "$R/predict-unscaled.log" 2>&1   # for comparison: speed 1
note predicted; pack
wait $SP; note "$(cat $R/serve.log)"
grep -q "vLLM up" "$R/serve.log" || { pack; exit 1; }
note sweep
timeout 120 taskset -c 15 $MC sweep --base-url $U --out "$R/h-on-short.jsonl" --label "xgrammar mns256 async, session H" \
  --arms on --tier flat bounded --concurrency 64 160 --rounds 6 --min-requests 32 > "$R/sweep.log" 2>&1
note "sweep rc $?"; pack
