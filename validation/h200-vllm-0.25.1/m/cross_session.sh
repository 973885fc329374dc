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
SM=$(awk '/speed/ {print $6}' $V/m/bench-start.txt); SM2=$(awk '/speed/ {print $6}' $V/m/bench-fresh.txt)
FITTED="J-xgrammar I-guidance M-xgrammar M-xgrammar-b M2-xgrammar"
row() { cross_row $O "ij=$V/l/profile-ij-speeds.json.gz ijm=$V/m/profile-ijm-pool.json.gz" "$@"; }
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
X="--backend xgrammar --cores 14"; G="--backend guidance --cores 14"
{
  cross_rows_al   # sessions A-L (defaults.sh), then M's
  row M-xgrammar $SM "$X" $V/m/m1-xgrammar.jsonl
  row M-xgrammar-b $SM "$X" $V/m/m5-xgrammar-2.jsonl
  row M2-xgrammar $SM2 "$X" $V/m/m7-xgrammar-3.jsonl
  row M-unique $SM "$X" $V/m/m2-unique.jsonl
  row M-guidance $SM "$G" $V/m/m3-guidance.jsonl
  row M2-guidance $SM2 "$G" $V/m/m8-guidance-2.jsonl
  row M-taskset4 $SM "--backend xgrammar --cores 4 --cpu-count 16" $V/m/m4-taskset4.jsonl
} | sort -t"|" -k2,2 -k3,3 -s   # listed by sweep
cross_summary $O "$FITTED" ij ijm
