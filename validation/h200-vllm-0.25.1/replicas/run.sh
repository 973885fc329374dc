#!/bin/bash
# Issue 39's one-GPU check on the device machine (README.md here: cells, order, scoring rule).
# From the repository root, after a first call `cp .device-stage/a/part00 /tmp/stage-part00`:
#   bash validation/h200-vllm-0.25.1/replicas/run.sh replicas  # servers A and B on cores 0-7; alone / together / alone
#   bash validation/h200-vllm-0.25.1/replicas/run.sh quota     # A alone: cpuset 0-3, quota 4 and 2 CPUs on 0-11, cpuset again
#   bash validation/h200-vllm-0.25.1/replicas/run.sh omp1      # (run 3) A again on 0-11 with OMP_NUM_THREADS=1: quota 4 and 2
#   bash validation/h200-vllm-0.25.1/replicas/run.sh team8     # (run 6) A again as the quota phase had it (team of 8): quota 4 and 2
#   bash validation/h200-vllm-0.25.1/replicas/run.sh ompswitch # (run 7) A as the quota phase left it, its team switched 8, 1, 8
# Sweeps go to $REP/CELL-*.jsonl (default /tmp/rep; a sweep there already is resumed, not run again),
# packed into $OUT/PHASE.tar.gz after every sweep.
set -u
PHASE=$1; ROOT=$PWD; D=$ROOT/validation/h200-vllm-0.25.1/replicas; R=${REP:-/tmp/rep}; mkdir -p $R
LOGS="A A-team8 A-omp1 B"  # the servers' logs (A-team8, A-omp1: server A's as it was before the restart that followed)
pack() { for n in $LOGS; do [ -f $R/$n.log ] && gzip -kf $R/$n.log; done
  tar -C "$(dirname $R)" $(for n in $LOGS; do echo --exclude=$n.log; done) -czf "$OUT/$PHASE.tar.gz" "$(basename $R)"; }
. "$D/engines.sh"
# run 7: every Python process here catches the team switch (ompswitch/sitecustomize.py); nothing changes until signalled
export PYTHONPATH=$D/ompswitch:$PYTHONPATH MASKCOST_OMP_SWITCH=8
pids() { ps -eo pid=,sid= | awk -v s="$(cat $R/A.pid)" '$2 == s {print $1}'; }  # server A's processes (its session)
if [ "$PHASE" = replicas ]; then
  { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA"; nvidia-smi --query-gpu=name,driver_version --format=csv;
    ls .device-stage/w; } > "$R/host.txt" 2>&1
  pkill -f vllm.entrypoints.cli.main && sleep 10  # servers of an earlier run on this machine
  serve A 8000 0-7; up A 8000 || { pack; exit 1; }
  serve B 8001 0-7; up B 8001 || { pack; exit 1; }
  for arm in on off; do for c in 64 192; do  # each together point bracketed by A alone before and after
    sweep alone-1 8000 8-15 $c $arm
    sweep together-a 8000 8-11 $c $arm & a=$!; sweep together-b 8001 12-15 $c $arm & b=$!; wait $a $b  # (not the servers)
    sweep alone-2 8000 8-15 $c $arm
    pack
  done; done
elif [ "$PHASE" = ompswitch ]; then
  # run 7: server A as the quota phase left it (in the cgroup, a team of 8), moved back to cores 0-11; for each load
  # and quota its team of 8, then of one, then of 8 again, switched by a signal between the sweeps (no restart)
  CG=/sys/fs/cgroup/maskcost-quota
  { [ -d $CG ] && curl -sf http://127.0.0.1:8000/health >/dev/null; } || { echo "run the quota phase first"; exit 1; }
  for p in $(pids); do taskset -a -p -c 0-11 "$p" >/dev/null; done
  quota() { echo "$1 100000" > $CG/cpu.max; echo "$PHASE cpu.max $(cat $CG/cpu.max)" >> "$R/cgroup.txt"; }
  team() { echo "$(date +%T) team $1" >> "$R/ompswitch.txt"
    python3 "$D/ompswitch/send.py" "$1" $(pids) >> "$R/ompswitch.txt" 2>&1 || { echo "team $1: not switched"; pack; exit 1; }
    sleep 2; }
  for c in 64 192; do for q in 4 2; do
    quota ${q}00000; cat $CG/cpu.stat >> "$R/cgroup.txt"
    team back; sweep sw8quota$q-1 8000 12-15 $c on
    team 1; sweep sw1quota$q 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    team back; sweep sw8quota$q-2 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    pack
  done; done
  quota max; cat /tmp/ompswitch-* >> "$R/ompswitch.txt" 2>/dev/null
elif [ "$PHASE" = omp1 ] || [ "$PHASE" = team8 ]; then
  # omp1 (run 3): A started again on 0-11 with a team of one OpenMP thread (no spinners after the bitmask copy);
  # team8 (run 6): A started again as the quota phase had it (on 0-7, a team of 8, then moved to 0-11), the cells
  # after the omp1 ones, so each team-of-1 cell is bracketed by team-of-8 cells before and after a restart
  CG=/sys/fs/cgroup/maskcost-quota
  [ -d $CG ] || { echo "no cgroup from the quota phase: run it first"; exit 1; }
  for n in A B; do [ -f $R/$n.pid ] && kill -- -"$(cat $R/$n.pid)" 2>/dev/null; done; sleep 10
  [ -f $R/A.log ] && mv $R/A.log $R/A-$([ $PHASE = omp1 ] && echo team8 || echo omp1).log
  if [ $PHASE = omp1 ]; then OMP_NUM_THREADS=1 serve A 8000 0-11; else serve A 8000 0-7; fi
  up A 8000 || { pack; exit 1; }
  [ $PHASE = team8 ] && for p in $(pids); do taskset -a -p -c 0-11 "$p" >/dev/null; done
  for p in $(pids); do echo "$p" > $CG/cgroup.procs; done
  quota() { echo "$1 100000" > $CG/cpu.max; echo "$PHASE cpu.max $(cat $CG/cpu.max)" >> "$R/cgroup.txt"; }
  for c in 64 192; do
    quota 400000; cat $CG/cpu.stat >> "$R/cgroup.txt"; sweep ${PHASE}quota4 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    quota 200000; sweep ${PHASE}quota2 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    pack
  done
  quota max
else
  if ! curl -sf http://127.0.0.1:8000/health >/dev/null; then  # (run 7: quota before replicas) A as replicas starts it
    [ -f $R/host.txt ] || { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA";
      nvidia-smi --query-gpu=name,driver_version --format=csv; ls .device-stage/w; } > "$R/host.txt" 2>&1
    pkill -f vllm.entrypoints.cli.main && sleep 10
    serve A 8000 0-7; up A 8000 || { pack; exit 1; }
  fi
  [ -f $R/B.pid ] && kill -- -"$(cat $R/B.pid)" 2>/dev/null; sleep 5
  CG=/sys/fs/cgroup/maskcost-quota
  { mkdir -p $CG && (grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control) \
    && for p in $(pids); do echo "$p" > $CG/cgroup.procs; done && cat $CG/cpu.max; } > "$R/cgroup.txt" 2>&1 \
    || { echo "no cgroup v2 cpu controller here:"; cat "$R/cgroup.txt"; pack; exit 1; }
  aff() { for p in $(pids); do taskset -a -p -c "$1" "$p" >/dev/null; done; }
  quota() { echo "$1 100000" > $CG/cpu.max; echo "cpu.max $(cat $CG/cpu.max)" >> "$R/cgroup.txt"; }
  for c in 64 192; do
    aff 0-3; quota max; sweep cpuset4-1 8000 12-15 $c on
    aff 0-11; quota 400000; cat $CG/cpu.stat >> "$R/cgroup.txt"; sweep quota4 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    quota 200000; sweep quota2 8000 12-15 $c on; cat $CG/cpu.stat >> "$R/cgroup.txt"
    aff 0-3; quota max; sweep cpuset4-2 8000 12-15 $c on
    pack
  done
fi
pack; tail -12 "$R/sweep.log" | grep -v "^$"; ls $R
