#!/bin/bash
# Post hoc (after Z was scored; not predictions): the embedded default (z/make_default.sh) against u2fes on
# Y's and Z's servers by the median-itl rule, each with its own grids (the default's: predicted-default-*.json,
# made here as predict_z.sh makes Z's).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/z/default_check.sh > validation/h200-vllm-0.25.1/z/default-check.md
set -eu
V=validation/h200-vllm-0.25.1; D=$V/z; TMP=$(mktemp)
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cores 14 --cpu-speed $GRID"
C="--concurrency 8 32 64 96 128 160 192 224 256"
for b in xgrammar guidance; do
  python3 -m maskcost.cli predict --backend $b $S $C --json $D/predicted-default-$b.json > /dev/null 2>&1
done
source $V/scoring.sh   # itl_row, itl_header, itl_summary
DEF=maskcost/profiles/default.json.gz
itl_header
for s in y1 y2 y3 y4 z1; do
  S=${s:0:1}; b=xgrammar; case $s in y2|y4|z1) b=guidance;; esac
  IDLE=$(awk '/speed/ {print $6}' $V/$S/bench-idle.txt)
  PROFILE=$DEF itl_row "$V/$S" "$IDLE" "$TMP.def" "${S^^} $s $b, default" $D/predicted-default-$b.json $s
  PROFILE=$D/profile-u2fes.json.gz itl_row "$V/$S" "$IDLE" "$TMP.z" "${S^^} $s $b, u2fes" $D/predicted-$b.json $s
done
echo
itl_summary "$TMP.def" "the embedded default, Y and Z" "each session's idle bench"
itl_summary "$TMP.z" "u2fes, Y and Z" "each session's idle bench"
rm -f "$TMP"*
