#!/bin/bash
# Every session's schema-on sweep against the model now, with the old
# embedded default (session E post hoc) and the new one (j/profile-ij-default.json.gz), each at the
# session's bench speed where it measured one (I 0.926, J 0.877; else 1). Not pre-registered: the
# model as it stands after sessions I and J, on data from six servers. J (xgrammar) and I (guidance)
# fitted the new default's engine step: in-sample for it.
# usage: bash validation/h200-vllm-0.25.1/j/cross_session.sh
set -u
source validation/h200-vllm-0.25.1/defaults.sh
O=$V/j/cross-session; mkdir -p $O
SI=$(cat $V/i/speed.txt); SJ=$(awk '/speed/ {print $6}' $V/j/bench-start.txt)
row() { cross_row $O "old=$V/e/profile-e-posthoc.json.gz new=$V/j/profile-ij-default.json.gz" "$@"; }
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
cross_summary $O "J-xgrammar I-guidance" old new
