#!/bin/bash
# Where the model's deep schema is too dear (README.md here: the question, what runs, what is concluded how).
# From the repository root, after a first call `cp .device-stage/a/part00 /tmp/stage-part00`:
#   DEADLINE=515 bash validation/h200-vllm-0.25.1/fillprobe/run.sh    (again in the next call: it resumes)
# One vLLM 0.25.1 xgrammar server on the H200 and all 16 cores, the in-server probe on (maskcost probe-site:
# each engine-thread call timed); `calibrate --base-url` against it (the three shape schemas mixed), then each
# schema alone at 32 and 128 clients, two repeats, the repeat outermost, so the host's drift falls on every
# schema alike. Stops starting sweeps after $DEADLINE s of this call; results packed into $OUT/fillprobe.tar.gz
# after calibrate and after every sweep.
set -u
T0=$(date +%s); ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/shape; R=${FILLPROBE:-/tmp/fillprobe}
mkdir -p $R/xg $R/probe
pack() { [ -f $R/xg.log ] && gzip -c $R/xg.log > $R/xg.log.gz
  tar -C "$(dirname $R)" --exclude=xg.log -czf "$OUT/fillprobe.tar.gz" "$(basename $R)"; }
late() { [ $(( $(date +%s) - T0 )) -gt "${DEADLINE:-540}" ]; }
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
[ -f $R/host.txt ] || { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA";
  nvidia-smi --query-gpu=name,driver_version --format=csv; ls .device-stage/w; } > $R/host.txt 2>&1
if ! curl -sf http://127.0.0.1:8000/health >/dev/null; then
  pkill -f vllm.entrypoints.cli.main && sleep 10
  python3 -m maskcost.cli probe-site /tmp/probe-site --engine vllm --engine-version 0.25.1 > $R/probe-site.log 2>&1 \
    || { echo "$(date +%T) probe-site failed" >> $R/steps.txt; pack; exit 1; }
  # the probe on the server's path only: calibrate's own replays stay unpatched
  PYTHONPATH=/tmp/probe-site:$PYTHONPATH MASKCOST_PROBE_DIR=$R/probe serve xg 8000 0-15
  up xg 8000 >> $R/steps.txt || { pack; exit 1; }
  echo "$(date +%T) server up after $(( $(date +%s) - T0 )) s" >> $R/steps.txt
fi
if [ ! -f $R/xg/host.json.gz ] && [ -n "${SKIP_CALIBRATE:-}" ]; then  # device time short: no calibrate (README)
  echo "$(date +%T) calibrate skipped" >> $R/steps.txt
elif [ ! -f $R/xg/host.json.gz ]; then
  s=$(date +%s)
  python3 -m maskcost.cli calibrate --base-url http://127.0.0.1:8000 --tokenizer /tmp/llama3-8b \
    --schema $D/schemas/flat.json $D/schemas/nested.json $D/schemas/deep.json --server-engine vllm \
    --server-engine-version 0.25.1 --server-backend xgrammar --max-num-seqs 256 --out $R/xg/host.json.gz \
    > $R/calibrate.log 2>&1
  rc=$?; echo "$(date +%T) calibrate rc $rc $(( $(date +%s) - s )) s" >> $R/steps.txt; pack
  [ $rc = 0 ] || exit 1
fi
one() {  # SCHEMA CONC REPEAT: schema on, that schema alone (a sweep resumes: only the repeat not yet run)
  local rounds; rounds=$(case $2 in 32) echo 12;; *) echo 4;; esac)
  timeout 150 python3 -m maskcost.cli sweep --base-url http://127.0.0.1:8000 --out "$R/xg/$1.jsonl" --arms on \
    --concurrency "$2" --repeats "$3" --schema "$D/schemas/$1.json" --rounds $rounds --client-procs $([ $2 = 32 ] && echo 2 || echo 4) \
    --label "xg-$1" >> "$R/sweep.log" 2>&1
  local rc=$?; echo "$(date +%T) xg $1 c$2 repeats $3 rc=$rc" >> $R/steps.txt; pack
}
for r in 1 2; do for c in 32 128; do for s in flat nested deep; do
  late && { echo "$(date +%T) deadline: stopped before $s c$c r$r" >> $R/steps.txt; pack; exit 0; }
  one $s $c $r
done; done; done
echo "$(date +%T) done" >> $R/steps.txt; pack
cat $R/steps.txt
