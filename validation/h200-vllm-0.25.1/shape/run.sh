#!/bin/bash
# Issue 36 item 2 on the device (README.md here: what runs, the predictions, the scoring rule).
# From the repository root, after a first call `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/shape/run.sh         (again in the next call: it resumes)
#   bash validation/h200-vllm-0.25.1/shape/run.sh rerun   (run 2: no calibration, flat and nested only,
#                                                          longer points: rounds 12 / 4 / 3 at 32 / 128 / 256)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run3    (run 3: calibrate with --backend-url guidance=:8001,
#       each backend's traces its own server's outputs; calibrate's speed points run again at once; each
#       server's threads' CPU during its flat c128 point; then run 2's points)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run5    (run 5: run 4's steps on another machine, with the
#       calibrate that splits the forward by NVML; check.py predicts each schema's sweep request)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run6    (run 6: run 4's steps again, with the calibrate whose
#       sweeps spread their clients over processes and whose API-server fits leave out busy-client points)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run7    (run 7: run 4's steps again, with the calibrate whose
#       API-server fit stays within the rate the server served; the servers started one after the other)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run8    (run 8: run 4's steps again, with the calibrate that
#       traces 96 of its speed points' outputs a schema, each replayed once, where runs 1-7 traced 32 three times)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run9    (run 9: run 4's steps again, with the calibrate that traces
#       the schemas in turns; after calibrate, order_control.py replays its outputs in blocks and in turns)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run10   (run 10: run 9's steps, with the calibrate that reads the API
#       server's costs from its event loop's CPU; the order control given the tokenizer folder)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run11   (run 11: run 10's steps, with the calibrate that reads a
#       structured stream's loop costs apart from a schema-off one's)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run12   (run 12: run 11's steps, with the model that runs each point to
#       +-2% and the calibrate whose loop fit takes the window's rates; 4 client processes from 128 clients up)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run13   (run 13: run 12's steps, with the calibrate that prices the API
#       server by its process's CPU, a structured stream by its tokens alone)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run14   (run 14: run 13's steps without the order control, each schema-alone
#       point three times where runs 1-13 ran two, with the model whose forward curve joins a batch read twice)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run15   (run 15: run 14's points on 16 cores only, four repeats a point, no
#       6-core points)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run16   (run 16: run 15's steps with the deep schema alone too, three
#       repeats a point)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run17   (run 17: run 16's steps with calibrate's trace counts planned
#       from a pilot, two repeats a point, the repeat outermost)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run18   (run 18: run 17's steps again on a fresh machine, a replicate)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run19   (run 19: run 17's steps, with the calibrate that draws llguidance's
#       fitted fill factor halfway toward the record's)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run20   (run 20: run 17's steps, with the API server's costs priced as
#       read at the speed read: ForwardCurve.frontend_read_speed)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run21   (run 21: run 20's steps again on a fresh machine, a replicate)
#   bash validation/h200-vllm-0.25.1/shape/run.sh run4    (run 4: calibrate with --backend-url, which now also fits
#       llguidance's in-engine fill factor on that server's own speed points; run 2's points; then both servers
#       moved to cores 0-5 (taskset on every process of each, cpu_count stays 16), flat and nested at 128
#       clients on each, the clients on cores 6-15)
# Two vLLM servers side by side on one H200 and all 16 cores: xgrammar on :8000, llguidance on :8001.
# `calibrate --base-url` against the xgrammar one (the three schemas mixed), then each schema alone on
# each server at 32, 128 and 256 clients, twice, interleaved (load, repeat, schema, server), so the
# host's drift over minutes falls on every schema alike. Stops starting sweeps after $DEADLINE s
# (default 540) of this call; results packed into $OUT/shape.tar.gz after every step.
set -u
RUN=${1:-run1}; MODE=$RUN; case "$MODE" in run5|run6|run7|run8|run9|run10|run11|run12|run13|run14|run15|run16|run17|run18|run19|run20|run21) MODE=run4 ;; esac  # runs 5-21: run 4's
T0=$(date +%s); ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/shape; R=${SHAPE:-/tmp/shape}; mkdir -p $R/xg $R/gd
pack() { for n in xg gd; do [ -f $R/$n.log ] && gzip -c $R/$n.log > $R/$n.log.gz; done
  tar -C "$(dirname $R)" --exclude=xg.log --exclude=gd.log -czf "$OUT/shape.tar.gz" "$(basename $R)"; }
late() { [ $(( $(date +%s) - T0 )) -gt "${DEADLINE:-540}" ]; }
. "$ROOT/validation/h200-vllm-0.25.1/replicas/engines.sh"
[ -f $R/host.txt ] || { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA";
  nvidia-smi --query-gpu=name,driver_version --format=csv; ls .device-stage/w; } > $R/host.txt 2>&1
if ! curl -sf http://127.0.0.1:8000/health >/dev/null || ! curl -sf http://127.0.0.1:8001/health >/dev/null; then
  pkill -f vllm.entrypoints.cli.main && sleep 10
  # one after the other (run 6: started together, the second's memory profile counted the first's weights and
  # it died, "No available memory for the cache blocks"; runs 1-5 started together and lived, with smaller caches)
  serve xg 8000 0-15; up xg 8000 || { pack; exit 1; }
  serve gd 8001 0-15 --structured-outputs-config.backend guidance; up gd 8001 || { pack; exit 1; }
  echo "$(date +%T) servers up after $(( $(date +%s) - T0 )) s" >> $R/steps.txt
fi
if [ $MODE != rerun ] && [ ! -f $R/xg/host.json.gz ]; then
  s=$(date +%s)
  python3 -m maskcost.cli calibrate --base-url http://127.0.0.1:8000 --tokenizer /tmp/llama3-8b \
    --schema $D/schemas/flat.json $D/schemas/nested.json $D/schemas/deep.json --server-engine vllm \
    --server-engine-version 0.25.1 --server-backend xgrammar --max-num-seqs 256 --out $R/xg/host.json.gz \
    $([ $MODE = run3 ] || [ $MODE = run4 ] && echo --backend-url guidance=http://127.0.0.1:8001) > $R/calibrate.log 2>&1
  rc=$?; echo "$(date +%T) calibrate rc $rc $(( $(date +%s) - s )) s" >> $R/steps.txt; pack
  [ $rc = 0 ] || exit 1
fi
# the same outputs replayed in blocks and in turns (runs 9-11)
if { [ $RUN = run9 ] || [ $RUN = run10 ] || [ $RUN = run11 ] || [ $RUN = run12 ] || [ $RUN = run13 ]; } && [ ! -s $R/order_control.json ]; then
  python3 $D/order_control.py $R /tmp/llama3-8b > $R/order_control.json 2> $R/order_control.log
  rc=$?; echo "$(date +%T) order control rc $rc" >> $R/steps.txt; pack  # (runs 9-10 logged date's status: 0)
fi
if [ $MODE = run3 ] && [ ! -f $R/xg/respeed.jsonl ]; then  # calibrate's speed points again, the same way, at once
  timeout 200 python3 -m maskcost.cli sweep --base-url http://127.0.0.1:8000 --out $R/xg/respeed.jsonl --arms on \
    --concurrency 48 96 144 224 --schema $D/schemas/flat.json $D/schemas/nested.json $D/schemas/deep.json \
    --rounds 3 --label respeed >> $R/sweep.log 2>&1
  rc=$?; echo "$(date +%T) respeed rc $rc" >> $R/steps.txt; pack
fi
probe() {  # SERVER: its process tree's CPU by thread over 6 s of a point, and three stacks of its EngineCore
  local pid; pid=$(cat $R/$1.pid); sleep 5
  python3 $D/threads.py $pid 6 > $R/threads-$1.txt 2>&1
  local eng; eng=$(pgrep -P $pid -f EngineCore | head -1)
  { tr '\0' '\n' < /proc/${eng:-0}/environ | grep -E "^(OMP|MKL|KMP|TORCH|VLLM)"; grep -oE "lib(g|i)omp[^ ]*" /proc/${eng:-0}/maps | sort -u
    cat /proc/${eng:-0}/task/*/comm | sort | uniq -c; } > $R/stacks-$1.txt 2>&1
  for i in 1 2 3; do /tmp/mc/bin/py-spy dump --pid ${eng:-0} >> $R/stacks-$1.txt 2>&1; sleep 1; done
}
one() {  # SERVER PORT SCHEMA CONC REPEATS: schema on, that schema alone (a sweep resumes: only the repeat not yet run)
  local procs=1 rounds=3; [ "$4" -ge 128 ] && procs=2
  # run 12: 4 processes from 128 clients (runs 9-11: llguidance's 2 at 256 were 83-102% busy each, the client the limit)
  { [ $RUN = run12 ] || [ $RUN = run13 ] || [ $RUN = run14 ] || [ $RUN = run15 ] || [ $RUN = run16 ] || [ $RUN = run17 ] || [ $RUN = run18 ] || [ $RUN = run19 ] || [ $RUN = run20 ] || [ $RUN = run21 ]; } && [ "$4" -ge 128 ] && procs=4
  { [ $RUN = run16 ] || [ $RUN = run17 ] || [ $RUN = run18 ] || [ $RUN = run19 ] || [ $RUN = run20 ] || [ $RUN = run21 ]; } && [ "$4" = 32 ] && procs=2  # runs 16-21: deep's stream at 32 clients kept run 1's one process 75% busy
  [ $MODE != run1 ] && rounds=$(case $4 in 32) echo 12;; 128) echo 4;; *) echo 3;; esac)
  [ $MODE = run3 ] && [ $3 = flat ] && [ $4 = 128 ] && [ ! -f $R/threads-$1.txt ] && probe $1 &
  timeout 150 taskset -c "${CLIENT_CORES:-0-15}" python3 -m maskcost.cli sweep --base-url "http://127.0.0.1:$2" --out "$R/$1/$3.jsonl" --arms on \
    --concurrency "$4" --repeats "$5" --schema "$D/schemas/$3.json" --rounds $rounds --client-procs $procs \
    --label "$1-$3" >> "$R/sweep.log" 2>&1
  local rc=$?; echo "$(date +%T) $1 $3 c$4 repeats $5 rc=$rc" >> $R/steps.txt  # (runs 1-10: date's status, 0)
}
# run 14: three repeats of each point (a ratio's two repeats differ by up to 20%), the repeat outermost (a call cut
# short leaves every load with as many repeats)
# run 15: four, and no 6-core points; run 16: three, the deep schema too, no 6-core points
LOOPS="c r"; NREP=2; [ $RUN = run14 ] && { NREP=3; LOOPS="r c"; }; [ $RUN = run15 ] && { NREP=4; LOOPS="r c"; }
[ $RUN = run16 ] && { NREP=3; LOOPS="r c"; }; { [ $RUN = run17 ] || [ $RUN = run18 ] || [ $RUN = run19 ] || [ $RUN = run20 ] || [ $RUN = run21 ]; } && { NREP=2; LOOPS="r c"; }  # (runs 17-21: one session's device time)
for i in $(for a in 32 128 256; do for b in $(seq $NREP); do [ "$LOOPS" = "c r" ] && echo $a:$b || echo $b:$a; done; done | sort -t: -k1,1n -s); do
  c=${i%%:*}; r=${i##*:}; [ "$LOOPS" = "r c" ] && { r=${i%%:*}; c=${i##*:}; }
  for s in $({ [ $MODE = run1 ] || [ $RUN = run16 ] || [ $RUN = run17 ] || [ $RUN = run18 ] || [ $RUN = run19 ] || [ $RUN = run20 ] || [ $RUN = run21 ]; } && echo flat nested deep || echo flat nested); do
  for srv in xg gd; do
    late && { echo "$(date +%T) deadline: stopped before $srv $s c$c r$r" >> $R/steps.txt; pack; exit 0; }
    one $srv $([ $srv = xg ] && echo 8000 || echo 8001) $s $c $r
  done
done; pack; done
if [ $MODE = run4 ] && [ $RUN != run15 ] && [ $RUN != run16 ] && [ $RUN != run17 ] && [ $RUN != run18 ] && [ $RUN != run19 ] && [ $RUN != run20 ] && [ $RUN != run21 ]; then  # the core count calibrate did not use: both servers on cores 0-5, the clients on 6-15
  mkdir -p $R/xg6 $R/gd6
  for srv in xg gd; do for p in $(pgrep -s "$(cat $R/$srv.pid)"); do taskset -a -p -c 0-5 $p; done; done > $R/taskset.txt 2>&1
  for s in flat nested; do for srv in xg gd; do
    late && { echo "$(date +%T) deadline: stopped before $srv $s 6 cores" >> $R/steps.txt; pack; exit 0; }
    CLIENT_CORES=6-15 one ${srv}6 $([ $srv = xg ] && echo 8000 || echo 8001) $s 128 1
  done; done; pack
fi
echo "$(date +%T) done" >> $R/steps.txt; pack
# run 3, exploratory, where this call has the time: the xgrammar server again with OMP_NUM_THREADS=1, its
# flat points at 32 and 128 and its threads: is the CPU a step beyond the model's parts an OpenMP pool?
if [ $MODE = run3 ] && [ -z "${NO_OMP:-}" ] && [ ! -f $R/xg1/flat.jsonl ] && [ $(( $(date +%s) - T0 )) -lt 330 ]; then
  mkdir -p $R/xg1; pk=$(cat $R/xg.pid); kill $pk
  for i in $(seq 60); do kill -0 $pk 2>/dev/null || break; sleep 1; done; sleep 5
  OMP_NUM_THREADS=1 serve xg1 8000 0-15; up xg1 8000 >> $R/steps.txt || { pack; exit 1; }
  for c in 32 128; do one xg1 8000 flat $c 1; done
  echo "$(date +%T) omp1 done" >> $R/steps.txt; pack
fi
cat $R/steps.txt
