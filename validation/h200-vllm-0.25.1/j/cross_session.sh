#!/bin/bash
# Every session's schema-on sweep against the model now, with the old
# embedded default (session E post hoc) and the new one (j/profile-ij-default.json.gz), each at the
# session's bench speed where it measured one (I 0.926, J 0.877; else 1). Not pre-registered: the
# model as it stands after sessions I and J, on data from six servers. J (xgrammar) and I (guidance)
# fitted the new default's engine step: in-sample for it.
# usage: bash validation/h200-vllm-0.25.1/j/cross_session.sh
set -u
V=validation/h200-vllm-0.25.1; O=$V/j/cross-session; mkdir -p $O
SI=$(cat $V/i/speed.txt); SJ=$(awk '/speed/ {print $6}' $V/j/bench-start.txt)
row() {  # row NAME SPEED "ENGINE ARGS" SWEEP...
  local name=$1 speed=$2 eng=$3; shift 3
  for prof in old new; do
    local p=$V/e/profile-e-posthoc.json.gz; [ $prof = new ] && p=$V/j/profile-ij-default.json.gz
    python3 -m maskcost.cli report $eng --cpu-speed $speed --profile $p --sweep "$@" --out $O/$name-$prof \
      --title "$name, $prof default" > /dev/null 2>&1 || { echo "| $name | $prof | failed |"; continue; }
    local pts=$(grep -E "^\| on" $O/$name-$prof/report.md | awk -F'|' '{printf "%s:%s ", $3, $9}')
    echo "| $name | $prof | $(grep -m1 -- '- ITL ms' $O/$name-$prof/report.md | sed 's/- ITL ms: //') | $pts |"
  done
}
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
X="--backend xgrammar"; G="--backend guidance"
row A-xgrammar 1.0 "$X" $V/a/on.jsonl
row E-h5-xgrammar 1.0 "$X" $V/e/h5-on-short.jsonl
row E-h3-shared1000 1.0 "$X" $V/e/h3-on-shared1000.jsonl
row H-xgrammar 1.0 "$X" $V/h/h-on-short.jsonl
row I-xgrammar $SI "$X" $V/i/i1-calib.jsonl $V/i/i2-on-short.jsonl
row J-xgrammar $SJ "$X" $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl
row D-guidance 1.0 "$G" $V/d/guidance/on.jsonl
row I-guidance $SI "$G" $V/i/i5-guidance-calib.jsonl $V/i/i5-guidance.jsonl
row D-mns128 1.0 "$X --max-num-seqs 128" $V/d/mns128/on.jsonl
row D-taskset4 1.0 "$X --cores 4 --cpu-count 16" $V/d/taskset4/on.jsonl
row I-taskset4 $SI "$X --cores 4 --cpu-count 16" $V/i/i7-taskset4.jsonl
python3 - "$O" <<'PY'
import glob, json, statistics, sys
print()
for prof in ("old", "new"):
    every, held = [], []
    for f in sorted(glob.glob(f"{sys.argv[1]}/*-{prof}/report.json")):
        name = f.split("/")[-2].rsplit("-", 1)[0]
        errs = [abs(r["metrics"]["ITL ms"]["error_pct"]) for r in json.load(open(f))["rows"]
                if r["arm"] == "on" and r["metrics"]["ITL ms"]["error_pct"] is not None]
        every += errs
        held += [] if name in ("J-xgrammar", "I-guidance") else errs
    print(f"- {prof} default: {len(every)} points, median |ITL error| {statistics.median(every):.1f}%; "
          f"the {len(held)} points the new default was not fitted on: {statistics.median(held):.1f}%")
PY
