#!/bin/bash
# Session W report, written before the session (session_w.sh says what is pre-registered): u/report.sh on W's
# servers w1-w3 with W's grids and profile (primary, directions, tertiary, P-W pooled); then the secondary
# (the xgrammar servers against profile-u1rows's grid) and the comparator (every point against U's grids, the
# embedded default), the same rule. Run it twice: the pooled table reads the score.md the first run wrote.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/w/report.sh > validation/h200-vllm-0.25.1/w/score.md
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/w}; TMP=$(mktemp)
echo "## Primary: W's profile (w/profile-u1loop.json.gz) and grids"
echo
S=w D=$D G=$V/w PROFILE=$V/w/profile-u1loop.json.gz bash $V/u/report.sh
echo
echo "## Secondary: the xgrammar servers with w/profile-u1rows.json.gz (the serial factor by rows)"
echo
source $V/scoring.sh   # itl_row, itl_header, itl_summary
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt)
itl_header
for s in w1 w3; do
  PROFILE=$V/w/profile-u1rows.json.gz itl_row "$D" "$IDLE" "$TMP" "W $s xgrammar, u1rows" $V/w/predicted-rows-xgrammar.json $s
done
echo
itl_summary "$TMP" "Secondary, the median of the earlier points' ITL speeds" "bench-idle's speed"
rm -f "$TMP"
echo
echo "## Comparator: the same points against U's grids (the embedded default)"
echo
S=w D=$D bash $V/u/report.sh | sed '/^Directions/,$d'
