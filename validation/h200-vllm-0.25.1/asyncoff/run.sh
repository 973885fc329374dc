#!/bin/bash
# vLLM 0.25.1 with async scheduling off, a setting the model was never checked against live (README.md here: what
# runs, the predictions, the scoring rule). From the repository root, after a first call
# `cp .device-stage/a/part00 /tmp/stage-part00`:
#   DEADLINE=510 bash validation/h200-vllm-0.25.1/asyncoff/run.sh run1     (again in the next call: it resumes)
# 1. xgrammar servers side by side on one GPU and all 16 cores: async scheduling on (vLLM's default) on :8000, off
#    (--no-async-scheduling) on :8001; `calibrate --base-url` against the default one, as a user calibrates.
# 2. at 32, 128 and 256 clients on both: no schema (flat's prompt, 128 tokens, ignore_eos), then flat and nested each
#    alone; two repeats, in the order repeat, load, schema, server (the async-on server first in repeat 1, the other in
#    repeat 2), so the host's drift falls on both alike.
# Stops starting sweeps after $DEADLINE s (default 510) of this call; results packed into $OUT/asyncoff.tar.gz after
# every step.
set -u
RUN=${1:-run1}; T0=$(date +%s); ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/shape; R=${ASYNCOFF:-/tmp/asyncoff}
mkdir -p $R/xg $R/xgoff
pack() { for n in xg xgoff; do [ -f $R/$n.log ] && gzip -c $R/$n.log > $R/$n.log.gz; done
  tar -C "$(dirname $R)" --exclude=xg.log --exclude=xgoff.log \
    -czf "$OUT/asyncoff.tar.gz" "$(basename $R)"; }
late() { [ $(( $(date +%s) - T0 )) -gt "${DEADLINE:-510}" ]; }
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
[ -f $R/host.txt ] || { echo "$RUN"; nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA";
  nvidia-smi --query-gpu=name,driver_version --format=csv; ls .device-stage/w; } > $R/host.txt 2>&1
pair() {  # ON OFF: both xgrammar servers up (async on :8000, off :8001), each started once
  local a=$1 b=$2; shift 2
  if ! curl -sf http://127.0.0.1:8000/health >/dev/null || ! curl -sf http://127.0.0.1:8001/health >/dev/null \
      || [ ! -f $R/$a.pid ] || ! kill -0 "$(cat $R/$a.pid)" 2>/dev/null; then
    pkill -f vllm.entrypoints.cli.main && sleep 10
    serve $a 8000 0-15 "$@"; up $a 8000 >> $R/steps.txt || { pack; exit 1; }
    serve $b 8001 0-15 "$@" --no-async-scheduling; up $b 8001 >> $R/steps.txt || { pack; exit 1; }
    grep -h "scheduling is" $R/$a.log $R/$b.log | sed "s/^/$a,$b: /" >> $R/steps.txt
    echo "$(date +%T) $a and $b up after $(( $(date +%s) - T0 )) s" >> $R/steps.txt
  fi
}
one() {  # SERVER PORT SCHEMA CONC REPEATS: that schema alone, or none: flat's prompt with no schema (a sweep
  local procs=4 rounds arm=on f=$3  # resumes: only the repeats not yet run)
  [ "$4" = 32 ] && procs=2; [ $3 = none ] && { arm=off; f=flat; }
  rounds=$(case $4 in 32) echo 12;; 128) echo 4;; *) echo 3;; esac)
  timeout 150 python3 -m maskcost.cli sweep --base-url "http://127.0.0.1:$2" --out "$R/$1/$3.jsonl" --arms $arm \
    --concurrency "$4" --repeats "$5" --schema "$D/schemas/$f.json" --rounds $rounds --client-procs $procs \
    --off-tokens 128 --label "$1-$3" >> "$R/sweep.log" 2>&1
  echo "$(date +%T) $1 $3 c$4 repeats $5 rc=$?" >> $R/steps.txt
}
points() {  # ON OFF NREP: the two servers' points, interleaved
  local r c s
  for r in $(seq $3); do for c in 32 128 256; do for s in none flat nested; do
    for srv in $([ $r = 1 ] && echo "$1 $2" || echo "$2 $1"); do
      late && { echo "$(date +%T) deadline: stopped before $srv $s c$c r$r" >> $R/steps.txt; pack; exit 0; }
      one $srv $([ $srv = $1 ] && echo 8000 || echo 8001) $s $c $r
    done
  done; done; pack; done
}
echo "$(date +%T) $RUN call: NREP=${NREP:-2} NO_CALIBRATE=${NO_CALIBRATE:-} DEADLINE=${DEADLINE:-510}" >> $R/steps.txt
pair xg xgoff
if [ -z "${NO_CALIBRATE:-}" ] && [ ! -f $R/xg/host.json.gz ]; then  # (NO_CALIBRATE=1: README's amendment)
  s=$(date +%s)
  python3 -m maskcost.cli calibrate --base-url http://127.0.0.1:8000 --tokenizer /tmp/llama3-8b \
    --schema $D/schemas/flat.json $D/schemas/nested.json $D/schemas/deep.json --server-engine vllm \
    --server-engine-version 0.25.1 --server-backend xgrammar --max-num-seqs 256 --out $R/xg/host.json.gz \
    > $R/calibrate.log 2>&1
  rc=$?; echo "$(date +%T) calibrate rc $rc $(( $(date +%s) - s )) s" >> $R/steps.txt; pack
  [ $rc = 0 ] || exit 1
fi
points xg xgoff "${NREP:-2}"
echo "$(date +%T) done" >> $R/steps.txt; pack
cat $R/steps.txt
