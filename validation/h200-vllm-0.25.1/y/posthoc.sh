#!/bin/bash
# Post hoc, before Y ran (not predictions): sessions U, V and W's servers by the median-itl rule against W's
# grids and profile (u1loop, what W registered) and against Y's (u2fe: the same with the API server's cost per
# request refitted on u2; u2 is U's guidance server, so U's guidance row is fitted, not a check).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/y/posthoc.sh > validation/h200-vllm-0.25.1/y/posthoc.md
set -eu
V=validation/h200-vllm-0.25.1; TMP=$(mktemp)
source $V/scoring.sh   # itl_row, itl_header, itl_summary
for g in "w u1loop" "y u2fe"; do
  set -- $g; G=$V/$1; PROFILE=$G/profile-$2.json.gz
  echo "## $2 ($1/profile-$2.json.gz, $1/predicted-*.json)"
  echo
  itl_header
  for S in u v w; do
    IDLE=$(awk '/speed/ {print $6}' $V/$S/bench-idle.txt)
    for i in 1 2 3; do
      b=xgrammar; [ $i = 2 ] && b=guidance
      itl_row "$V/$S" "$IDLE" "$TMP.$2.$b" "${S^^} $S$i $b" $G/predicted-$b.json $S$i
    done
  done
  echo
  for b in xgrammar guidance; do itl_summary "$TMP.$2.$b" "$2, $b servers of U-W" "each session's idle bench"; done
  cat "$TMP.$2".* > "$TMP.$2.all"; itl_summary "$TMP.$2.all" "$2, all of U-W" "each session's idle bench"
  echo
done
rm -f "$TMP"*
