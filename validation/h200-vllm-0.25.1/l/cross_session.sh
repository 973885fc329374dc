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
FITTED="J-xgrammar K-xgrammar L-xgrammar I-guidance"
row() { cross_row $O "ij=$V/j/profile-ij-default.json.gz ijkl=$V/l/profile-ijkl-default.json.gz" "$@"; }
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
cross_rows_al
cross_summary $O "$FITTED" ij ijkl
