#!/bin/bash
# On the device machine: assemble the staged site once (/tmp/sgsite, /tmp/llama3-8b), then (re)start a
# detached SGLang 0.5.17 server on 127.0.0.1:$PORT (default 8000) and wait until it answers /health.
# usage: [STAGE=DIR] [PORT=8000] [MEM=0.85] bash validation/h200-sglang-0.5.17/serve_sglang.sh BACKEND MAX_RUNNING [more flags...]
#   BACKEND: xgrammar | llguidance (or assemble: only unpack the site). MEM: --mem-fraction-static (two servers on one GPU: 0.4 each).
#   Log /tmp/sglang-$PORT.log, pid /tmp/sglang-$PORT.pid. Afterwards: export PYTHONPATH=/tmp/sgsite
# Fixed flags, and why: --load-format dummy (random weights: real shapes and kernels); --attention-backend
# triton and --sampling-backend pytorch (the staged sglang-kernel has no FA3 build; flashinfer is not
# called, SGLANG_IS_FLASHINFER_AVAILABLE=false); --constrained-json-disable-any-whitespace (a random
# model writes whitespace forever where the grammar allows it); --enable-metrics (the client reads
# sglang:num_running_reqs and the ITL histogram).
set -u
STAGE=${STAGE:-.device-stage-sg}
BACKEND=${1:-xgrammar}; MNS=${2:-256}; shift 2 || true
PORT=${PORT:-8000}; MEM=${MEM:-0.85}; LOG=/tmp/sglang-$PORT.log; PID=/tmp/sglang-$PORT.pid
exec 9>/tmp/sgsite.lock; flock 9   # two servers started together assemble the site once
if [ ! -d /tmp/sgsite ]; then
  first=/tmp/sg-part00; [ -f "$STAGE/a/part00" ] && first=$STAGE/a/part00   # a/ and b/ fit one call together
  cat "$first" "$STAGE"/b/part* > /tmp/sgbundle.tar.xz || exit 1
  mkdir -p /tmp/sgx && tar -C /tmp/sgx -xJf /tmp/sgbundle.tar.xz && mv /tmp/sgx/site /tmp/sgsite \
    && mv /tmp/sgx/llama3-8b /tmp/llama3-8b && rm -f /tmp/sgbundle.tar.xz || exit 1
fi
flock -u 9; exec 9>&-
[ "$BACKEND" = assemble ] && exit 0   # only the site and the tokenizer (serve_sglang.sh assemble)
export PYTHONPATH=/tmp/sgsite SGLANG_IS_FLASHINFER_AVAILABLE=false HF_HUB_OFFLINE=1 DO_NOT_TRACK=1
[ -f "$PID" ] && { pkill -TERM -g "$(cat "$PID")" 2>/dev/null || kill "$(cat "$PID")" 2>/dev/null; sleep 10; }
setsid nohup python3 -m sglang.launch_server --model-path /tmp/llama3-8b --served-model-name llama3-8b \
  --load-format dummy --context-length 4096 --max-running-requests "$MNS" --mem-fraction-static "$MEM" \
  --host 127.0.0.1 --port "$PORT" --grammar-backend "$BACKEND" --attention-backend triton \
  --sampling-backend pytorch --constrained-json-disable-any-whitespace --enable-metrics "$@" \
  > "$LOG" 2>&1 < /dev/null &
echo $! > "$PID"
for i in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && { echo "SGLang ($BACKEND, :$PORT) up after $((i*3)) s"; exit 0; }
  kill -0 "$(cat "$PID")" 2>/dev/null || { echo "SGLang died:"; grep -E "Error|error|No module" "$LOG" | tail -20; exit 1; }
  sleep 3
done
echo "SGLang not up after 360 s"; tail -30 "$LOG"; exit 1
