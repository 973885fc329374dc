# Shared helpers for the device session scripts (from session I on; A-H keep their own copies, as
# run; I and J ran with the setup lines that now live here inline: f44e90c, 3269926). Source after setting R (results folder under $OUT), PH (phase name) and DEADLINE_S.
# Every step appends to $R/steps.txt and re-packs $OUT/$(basename $R)-$PH.tar.gz, so a call cut
# short still returns what finished; a copy stays on the machine for the next phase's resume.
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD   # vLLM's packages, maskcost's wheels (less quicktok), maskcost
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000; CL="taskset -c 15"
T="--tier flat bounded"; LONG="--rounds 6 --min-requests 32"
SRV=.device-stage/b/serve_vllm.sh
WS="--structured-outputs-config.disable_any_whitespace true"
KEEP=/tmp/$(basename "$R")-keep
[ -d "$KEEP" ] && cp -r "$KEEP"/. "$R"/ 2>/dev/null   # an earlier phase on this machine: sweeps resume
left() { echo $(( DEADLINE_S - SECONDS )); }
pack() {
  gzip -c /tmp/vllm.log > "$R/vllm-$PH.log.gz" 2>/dev/null
  tar -C "$OUT" -czf "$OUT/$(basename "$R")-$PH.tar.gz" "$(basename "$R")"
  mkdir -p "$KEEP" && cp -r "$R"/. "$KEEP"/
}
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/steps.txt"; }
step() {  # step PLANNED_S LOGNAME command...   (skipped when under 20 s are left)
  local plan=$1 log=$2; shift 2
  local t; t=$(left); [ "$t" -gt "$plan" ] && t=$plan
  [ "$t" -lt 20 ] && { note "skipped: $log (${t}s left)"; return 1; }
  note "$log ($t s): $*"
  timeout "$t" "$@" > "$R/$log.log" 2>&1; local rc=$?
  note "rc $rc"; pack; return $rc
}
host_info() {  # host_info FILE: the machine, under $R
  { nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$R/$1" 2>&1
}
unpack_with_probe() {  # serve_vllm.sh's own unpack, done first so maskcost's probe can go into /tmp/site
  if [ ! -d /tmp/site ]; then
    note unpack
    cat /tmp/stage-part00 .device-stage/b/part0* > /tmp/bundle.tar.xz && mkdir -p /tmp/x && \
      tar -C /tmp/x -xJf /tmp/bundle.tar.xz && mv /tmp/x/site /tmp/site && mv /tmp/x/llama3-8b /tmp/llama3-8b
  fi
  $MC probe-site /tmp/site > "$R/probe-site.log" 2>&1   # inert unless MASKCOST_PROBE_DIR is set
}
bench() {  # bench NAME: the median of three single-thread replays (calibrate/host.py) on the model
  # folder's Llama-3 tokenizer, into $R/NAME.txt; SPEED = the default profile host's bench / this one.
  # On the client's core (idle between sweeps) from session M on: L's end bench, unpinned, shared
  # a core with the host meter and read 0.571.
  note "bench $1"
  $CL python3 -c "
from maskcost.calibrate.tokenizer import load_vocab; from maskcost.calibrate.host import bench_us
from maskcost.calibrate.profile import load_default_profile
v = load_vocab('/tmp/llama3-8b'); b = sorted(bench_us(v) for _ in range(3))[1]; p = load_default_profile().host.bench_us
print(f'bench_us {b:.1f} profile {p:.1f} speed {p / b:.4f}')" > "$R/$1.txt" 2>&1
  SPEED=$(awk '/speed/ {print $6}' "$R/$1.txt"); note "speed ${SPEED:-none}: $(tail -1 "$R/$1.txt")"
  SPEED=${SPEED:-1.0}
}
# From session R on: a server restarted with the probe, a sweep of the client processes, a server's opening and
# points (the caller sets SESSION, CL, CP, OPEN and PTS)
points_as_r() {  # from session U on (R, S and T set these inline, as run): the client on cores 14-15
  # in two processes, each server opened at 96 (3 rounds), the points 4 rounds of at least 32 requests
  CL="taskset -c 14,15"; CP="--client-procs 2"
  PTS="--rounds 4 --min-requests 32"
  OPEN="--arms on $T --concurrency 96 --rounds 3 --min-requests 32"
}
serve() {  # serve LOGNAME MNS CPUS [vllm flags...]: restart the server ($BACKEND, xgrammar unless set), the probe recording into $R/probe
  local log=$1 mns=$2 cpus=$3; shift 3
  step 240 "$log" env MASKCOST_PROBE_DIR="$R/probe" taskset -c "$cpus" bash $SRV "${BACKEND:-xgrammar}" "$mns" $WS "$@"
  grep -q "vLLM up" "$R/$log.log"
}
sweep() { local name=$1 plan=$2 label=$3; shift 3
  step "$plan" "$name" $CL $MC sweep --base-url $U --out "$R/$name.jsonl" --label "$label, session $SESSION" $CP "$@"; }
server() {  # server NAME MNS CPUS "CONCURRENCIES" PLAN_S LABEL [vllm flags...]: start, open at 96, run the points
  local name=$1 mns=$2 cpus=$3 conc=$4 plan=$5 label=$6; shift 6
  serve "serve-$name" "$mns" "$cpus" "$@" || return 1
  sweep "$name-open" 40 "$label, opening" $OPEN
  sweep "$name" "$plan" "$label" --arms on $T --concurrency $conc $PTS
}
