#!/bin/bash
# Session Z report, written before the session (session_z.sh says what is pre-registered): the primary (Z's grid
# and profile, z1 by the median-itl rule, the tertiary column at bench-idle's speed) and the P-Z pooled score.
# Run it twice: the pooled table reads the score.md the first run wrote.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/z/report.sh > validation/h200-vllm-0.25.1/z/score.md
set -eu
V=validation/h200-vllm-0.25.1; D=${D:-$V/z}; TMP=$(mktemp)
IDLE=$(awk '/speed/ {print $6}' $D/bench-idle.txt)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
echo "## Primary: Z's profile (z/profile-u2fes.json.gz) and grid"
echo
echo "Primary, each point at the median of the ITL speeds of the server's earlier points (the bench column: bench-idle, $IDLE):"
echo
itl_header
PROFILE=$V/z/profile-u2fes.json.gz itl_row "$D" "$IDLE" "$TMP" "Z z1 guidance" $V/z/predicted-guidance.json z1
echo
itl_summary "$TMP" "Primary, the median of the earlier points' ITL speeds" "bench-idle's speed"
rm -f "$TMP"
echo
echo "Pooled, every pre-registered scored point of P-Z (z/pooled.py):"
echo
python3 $V/z/pooled.py
