# Sourced by the device scripts that run several vLLM servers on one machine (run.sh here,
# ../../h200x2-vllm-0.25.1/run.sh): start one, wait for it, sweep it. Needs R (results folder), D (the
# folder with schemas/); run from the repository root after ../shared/device's first call.
# the staged bundle (once a machine) and maskcost's wheels, from the repository root
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl || exit 1
if [ ! -d /tmp/site ]; then
  cat /tmp/stage-part00 .device-stage/b/part0* > /tmp/bundle.tar.xz || exit 1
  mkdir -p /tmp/x && tar -C /tmp/x -xJf /tmp/bundle.tar.xz && mv /tmp/x/site /tmp/site && mv /tmp/x/llama3-8b /tmp/llama3-8b
fi
export PYTHONPATH=/tmp/site:/tmp/mc VLLM_USE_FLASHINFER_SAMPLER=0 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1
serve() {  # NAME PORT CORES [more vllm serve flags]; GPU_UTIL (default 0.42) and the caller's environment apply
  local name=$1 port=$2 cores=$3; shift 3
  taskset -c "$cores" setsid nohup python3 -m vllm.entrypoints.cli.main serve /tmp/llama3-8b --served-model-name llama3-8b \
    --load-format dummy --max-model-len 4096 --max-num-seqs "${MNS:-256}" --gpu-memory-utilization "${GPU_UTIL:-0.42}" \
    --host 127.0.0.1 --port "$port" --structured-outputs-config.backend xgrammar \
    --structured-outputs-config.disable_any_whitespace true "$@" > "$R/$name.log" 2>&1 < /dev/null &
  echo $! > "$R/$name.pid"
}
up() {  # NAME PORT
  for i in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$2/health" >/dev/null && { echo "$1 up after $((i*3)) s"; return 0; }
    kill -0 "$(cat $R/$1.pid)" 2>/dev/null || { echo "$1 died"; grep -E "Error|error" "$R/$1.log" | tail -8; return 1; }
    sleep 3
  done; echo "$1 not up"; return 1
}
sweep() {  # FILE PORT CLIENT_CORES CONC ARM
  timeout 150 taskset -c "$3" python3 -m maskcost.cli sweep --base-url "http://127.0.0.1:$2" --out "$R/$1.jsonl" \
    --arms "$5" --concurrency "$4" --schema "$D"/schemas/*.json --rounds 3 --client-procs "${CLIENT_PROCS:-2}" --label "$1" >> "$R/sweep.log" 2>&1
  local rc=$?; echo "$(date +%T) $1 $5 c$4 rc=$rc"  # (replicas runs 1-6 logged date's status: 0)
}
