#!/bin/bash
# Every session's schema-on sweeps against the model now, with the embedded default before sessions
# K and L (j/profile-ij-default.json.gz) and the one after (l/profile-ijkl-default.json.gz), each at
# the session's idle bench speed where it measured one (I 0.926, J 0.877, K 0.907, L 0.94 from the
# meter's first minute; else 1). Not pre-registered. J, K and L (xgrammar, max-num-seqs 256) and I
# (guidance) fitted the new default's engine step: in-sample for it; j/cross_session.sh is the table
# made after session J. usage: bash validation/h200-vllm-0.25.1/l/cross_session.sh
set -u
source validation/h200-vllm-0.25.1/defaults.sh
O=$V/l/cross-session; mkdir -p $O
SI=$(cat $V/i/speed.txt); SJ=$(awk '/speed/ {print $6}' $V/j/bench-start.txt); SK=$(cat $V/k/speed.txt); SL=0.94
FITTED="J-xgrammar K-xgrammar L-xgrammar I-guidance"
row() { cross_row $O "ij=$V/j/profile-ij-default.json.gz ijkl=$V/l/profile-ijkl-default.json.gz" "$@"; }
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
X="--backend xgrammar"; G="--backend guidance"; N="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"
row A-xgrammar 1.0 "$X" $V/a/on.jsonl
row E-h5-xgrammar 1.0 "$X" $V/e/h5-on-short.jsonl
row E-h3-shared1000 1.0 "$X" $V/e/h3-on-shared1000.jsonl
row H-xgrammar 1.0 "$X" $V/h/h-on-short.jsonl
row I-xgrammar $SI "$X" $V/i/i1-calib.jsonl $V/i/i2-on-short.jsonl
row J-xgrammar $SJ "$X" $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl
row K-xgrammar $SK "$X --cores 14" $V/k/k1-calib.jsonl $V/k/k2-held.jsonl
row L-xgrammar $SL "$X --cores 14" $V/l/l1-calib.jsonl $V/l/l2-held.jsonl
row D-guidance 1.0 "$G" $V/d/guidance/on.jsonl
row I-guidance $SI "$G" $V/i/i5-guidance-calib.jsonl $V/i/i5-guidance.jsonl
row D-mns128 1.0 "$X --max-num-seqs 128" $V/d/mns128/on.jsonl
row K-mns128 $SK "$X --cores 14 --max-num-seqs 128" $V/k/k3-mns128.jsonl
row D-ngram3 1.0 "$X $N" $V/d/ngram3/on.jsonl
row K-ngram3 $SK "$X --cores 14 $N" $V/k/k4-ngram.jsonl
row D-taskset4 1.0 "$X --cores 4 --cpu-count 16" $V/d/taskset4/on.jsonl
row I-taskset4 $SI "$X --cores 4 --cpu-count 16" $V/i/i7-taskset4.jsonl
cross_summary $O "$FITTED" ij ijkl
