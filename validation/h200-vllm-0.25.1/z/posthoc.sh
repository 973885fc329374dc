#!/bin/bash
# Post hoc, before Z ran (not predictions): sessions U-Y's servers by the median-itl rule against Z's grids and
# profile (u2fes; u2 is U's guidance server, the fit). usage (from the repository root):
# bash validation/h200-vllm-0.25.1/z/posthoc.sh > validation/h200-vllm-0.25.1/z/posthoc.md
set -eu
V=validation/h200-vllm-0.25.1; TMP=$(mktemp)
source $V/scoring.sh
G=$V/z; PROFILE=$V/z/profile-u2fes.json.gz; TAG=u2fes
itl_header
for S in u v w y; do
  IDLE=$(awk '/speed/ {print $6}' $V/$S/bench-idle.txt)
  n=3; [ $S = y ] && n=4
  for i in $(seq 1 $n); do
    b=xgrammar; [ $((i % 2)) = 0 ] && b=guidance
    itl_row "$V/$S" "$IDLE" "$TMP.$b" "${S^^} $S$i $b" $G/predicted-$b.json $S$i
  done
done
echo
for b in xgrammar guidance; do itl_summary "$TMP.$b" "$TAG, $b servers of U-Y" "each session's idle bench"; done
cat "$TMP".xgrammar "$TMP".guidance > "$TMP.all"; itl_summary "$TMP.all" "$TAG, all of U-Y" "each session's idle bench"
rm -f "$TMP"*
