#!/bin/bash
# Post hoc (after session M, not pre-registered): every session's schema-on sweeps against the model
# now, with the embedded default (ij) and the candidate with session M's pool/serial ratio
# (profile-ijm-pool.json.gz, pool_ratio.sh), each at the session's idle bench speed (I 0.926, J 0.877,
# K 0.907, L 0.94 from the meter's first minute, M 1.003 and 0.830 on its second machine; else 1).
# In-sample: J (xgrammar, both), I (guidance, both), M's three xgrammar sweeps (the candidate's ratio).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/m/cross_session.sh > validation/h200-vllm-0.25.1/m/cross-session.md
set -u
source validation/h200-vllm-0.25.1/defaults.sh
O=$V/m/cross-session; mkdir -p $O
SI=$(cat $V/i/speed.txt); SJ=$(awk '/speed/ {print $6}' $V/j/bench-start.txt); SK=$(cat $V/k/speed.txt); SL=0.94
SM=$(awk '/speed/ {print $6}' $V/m/bench-start.txt); SM2=$(awk '/speed/ {print $6}' $V/m/bench-fresh.txt)
FITTED="J-xgrammar I-guidance M-xgrammar M-xgrammar-b M2-xgrammar"
row() { cross_row $O "ij=$V/l/profile-ij-speeds.json.gz ijm=$V/m/profile-ijm-pool.json.gz" "$@"; }
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
X="--backend xgrammar"; G="--backend guidance"; N="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"
{
  row A-xgrammar 1.0 "$X" $V/a/on.jsonl &
  row E-h5-xgrammar 1.0 "$X" $V/e/h5-on-short.jsonl
  wait
  row E-h3-shared1000 1.0 "$X" $V/e/h3-on-shared1000.jsonl &
  row H-xgrammar 1.0 "$X" $V/h/h-on-short.jsonl
  wait
  row I-xgrammar $SI "$X" $V/i/i1-calib.jsonl $V/i/i2-on-short.jsonl &
  row J-xgrammar $SJ "$X" $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl
  wait
  row K-xgrammar $SK "$X --cores 14" $V/k/k1-calib.jsonl $V/k/k2-held.jsonl &
  row L-xgrammar $SL "$X --cores 14" $V/l/l1-calib.jsonl $V/l/l2-held.jsonl
  wait
  row M-xgrammar $SM "$X --cores 14" $V/m/m1-xgrammar.jsonl &
  row M-xgrammar-b $SM "$X --cores 14" $V/m/m5-xgrammar-2.jsonl
  wait
  row M2-xgrammar $SM2 "$X --cores 14" $V/m/m7-xgrammar-3.jsonl &
  row M-unique $SM "$X --cores 14" $V/m/m2-unique.jsonl
  wait
  row D-guidance 1.0 "$G" $V/d/guidance/on.jsonl &
  row I-guidance $SI "$G" $V/i/i5-guidance-calib.jsonl $V/i/i5-guidance.jsonl
  wait
  row M-guidance $SM "$G --cores 14" $V/m/m3-guidance.jsonl &
  row M2-guidance $SM2 "$G --cores 14" $V/m/m8-guidance-2.jsonl
  wait
  row D-mns128 1.0 "$X --max-num-seqs 128" $V/d/mns128/on.jsonl &
  row K-mns128 $SK "$X --cores 14 --max-num-seqs 128" $V/k/k3-mns128.jsonl
  wait
  row D-ngram3 1.0 "$X $N" $V/d/ngram3/on.jsonl &
  row K-ngram3 $SK "$X --cores 14 $N" $V/k/k4-ngram.jsonl
  wait
  row D-taskset4 1.0 "$X --cores 4 --cpu-count 16" $V/d/taskset4/on.jsonl &
  row I-taskset4 $SI "$X --cores 4 --cpu-count 16" $V/i/i7-taskset4.jsonl &
  row M-taskset4 $SM "$X --cores 4 --cpu-count 16" $V/m/m4-taskset4.jsonl
  wait
} | sort -t"|" -k2,2 -k3,3 -s   # the rows run two or three at a time; listed by sweep
cross_summary $O "$FITTED" ij ijm
