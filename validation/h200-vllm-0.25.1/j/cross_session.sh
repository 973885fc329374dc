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
row() {  # the sweeps of sessions A-J only (the table as of J)
  case $1 in K-*|L-*|D-ngram3) return 0 ;; esac
  cross_row $O "old=$V/e/profile-e-posthoc.json.gz new=$V/j/profile-ij-default.json.gz" "$@"; }
echo "| sweep | default | ITL score | per point (concurrency: error %) |"
echo "|---|---|---|---|"
cross_rows_al
cross_summary $O "J-xgrammar I-guidance" old new
